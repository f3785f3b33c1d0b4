import db from '@adonisjs/lucid/services/db'
import reconciliationConfig from '#config/reconciliation'

/**
 * The receivable window (RECEIVABLE_WINDOW_HOURS): an open receivable (a
 * payment credited whose bank line has not arrived) older than it is stale,
 * verify's stale_receivable. The rule lives here alone: verify
 * (verify/stale_receivable.ts), the back-office (the receivables tab, the
 * reconciliation page) and the metrics all read it from this file.
 */

const HOUR_MS = 3_600_000

/** The window in hours: the one given, or the configured one. */
export function receivableWindowHours(given?: number) {
  return given ?? reconciliationConfig.receivableWindowHours
}

/** The instant before which an open receivable is past the window (the rule, for SQL). */
export function receivableWindowStart(now: Date, windowHours: number) {
  return new Date(now.getTime() - windowHours * HOUR_MS)
}

/** An open receivable's age in hours, and whether it is past the window (the rule, for a row read). */
export function receivableAge(claimedAt: Date, now: Date, windowHours: number) {
  const ageHours = (now.getTime() - claimedAt.getTime()) / HOUR_MS
  return { ageHours, stale: ageHours > windowHours }
}

/** Open receivables past the window: the review tab's count and the metrics' figure. */
export async function staleReceivableCount(now = new Date(), windowHours?: number) {
  const row = await db
    .from('receipt_claims')
    .whereNull('statement_line_id')
    .whereNull('reversed_at')
    .where('claimed_at', '<', receivableWindowStart(now, receivableWindowHours(windowHours)))
    .count('* as total')
    .first()
  return Number(row?.total ?? 0)
}
