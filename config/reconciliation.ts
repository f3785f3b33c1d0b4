import env from '#start/env'

/** Reconciliation of the ledger with the bank (docs/reconciliation.md). */
const reconciliationConfig = {
  /**
   * Hours a payment credited before its bank line (a slip approved, a
   * payment marked paid) may wait for the line. Older, the receivable is a
   * review-queue item and `reconcile:verify` fails on it.
   */
  receivableWindowHours: env.get('RECEIVABLE_WINDOW_HOURS', 24),
  /**
   * Seconds a statement line may be dated after the import's own time (the
   * bank's clock and ours differ a little); a line later than that refuses
   * the import (app/reconciliation/future_statement_lines.ts).
   */
  statementClockSkewSeconds: env.get('STATEMENT_CLOCK_SKEW_SECONDS', 300),
  /**
   * The mail servers (their authserv-id in Authentication-Results) whose
   * DKIM verdict on a statement mail we trust; none by default, and then
   * every mailed statement is held as a person's file above the threshold
   * (app/reconciliation/fetch/mail_authentication.ts).
   */
  statementMailAuthservIds: (env.get('STATEMENT_MAIL_AUTHSERV_ID') ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean),
}

export default reconciliationConfig
