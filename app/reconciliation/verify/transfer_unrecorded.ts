import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Problem } from '#reconciliation/verify/types'

/**
 * Every posting that sends money out (a payout or settlement succeeded, a
 * credit line returned) has its transfer recorded for its debit line
 * (payout_confirmations). Postings name no account: unscoped only.
 */
export async function checkTransfersRecorded(trx: TransactionClientContract): Promise<Problem[]> {
  const [unrecorded] = await trx.rawQuery(
    `SELECT t.id, t.kind, t.reference_id FROM ledger_transactions t
      WHERE (t.kind IN ('withdraw_success', 'settlement_success') AND NOT EXISTS (
               SELECT 1 FROM payout_orders o JOIN payout_confirmations p ON p.payout_order_id = o.id
                WHERE o.platform_order_id = t.reference_id))
         OR (t.kind = 'statement_line_return' AND NOT EXISTS (
               SELECT 1 FROM payout_confirmations p WHERE p.returned_line_id = t.reference_id))`
  )
  return (unrecorded as Array<Record<string, any>>).map((row) => ({
    kind: 'transfer_unrecorded' as const,
    detail: `ledger transaction ${row.id} (${row.kind}, ${row.reference_id}) sends money out with no transfer recorded for its debit line`,
  }))
}
