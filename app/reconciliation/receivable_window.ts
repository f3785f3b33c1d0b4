import db from '@adonisjs/lucid/services/db'
import reconciliationConfig from '#config/reconciliation'

/**
 * The receivable window (RECEIVABLE_WINDOW_HOURS): an open receivable (a
 * payment credited whose bank line has not arrived) older than it is stale,
 * verify's stale_receivable. The back-office (the receivables tab, the
 * reconciliation page) and the metrics count them the same way.
 */

const HOUR_MS = 3_600_000

/** The instant before which an open receivable is past the window. */
export function receivableWindowStart(now: Date, windowHours: number) {
  return new Date(now.getTime() - windowHours * HOUR_MS)
}

/** Open receivables past the window: the review tab's count and the metrics' figure. */
export async function staleReceivableCount(now = new Date(), windowHours?: number) {
  const hours = windowHours ?? reconciliationConfig.receivableWindowHours
  const row = await db
    .from('receipt_claims')
    .whereNull('statement_line_id')
    .whereNull('reversed_at')
    .where('claimed_at', '<', receivableWindowStart(now, hours))
    .count('* as total')
    .first()
  return Number(row?.total ?? 0)
}
