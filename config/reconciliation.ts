import env from '#start/env'

/** Reconciliation of the ledger with the bank (docs/reconciliation.md). */
const reconciliationConfig = {
  /**
   * Hours a payment credited before its bank line (a slip approved, a
   * payment marked paid) may wait for the line. Older, the receivable is a
   * review-queue item and `reconcile:verify` fails on it.
   */
  receivableWindowHours: env.get('RECEIVABLE_WINDOW_HOURS', 24),
}

export default reconciliationConfig
