import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { BANK_REFERENCE, POSTED } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * One bank transfer, one claim (docs/reconciliation.md, "One transfer, one
 * line"): a claim naming a transfer (its trans_ref) that is a line another
 * claim took is one transfer credited twice; the open receivable of the
 * line's own account is receipt_claimed_twice already
 * (receivable_line_waiting.ts). Starts from the few claims naming a
 * transfer and reaches the lines through indexes.
 */
export async function checkTransfersClaimedOnce(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const [claims] = await trx.rawQuery(
    `SELECT c.id, c.path, c.trans_ref, c.deposit_account_id, co.platform_order_id,
            l.id AS line_id, l.deposit_account_id AS line_account,
            t.id AS taken_by, t.path AS taken_path, tco.platform_order_id AS taken_order
       FROM receipt_claims c
       JOIN statement_lines l ON l.trans_ref = c.trans_ref AND l.direction = 'credit'
        AND ${BANK_REFERENCE('l')} AND ${POSTED('l')}
       JOIN receipt_claims t ON t.statement_line_id = l.id AND t.id <> c.id
       LEFT JOIN payment_orders co ON co.id = c.payment_order_id
       LEFT JOIN payment_orders tco ON tco.id = t.payment_order_id
      WHERE c.trans_ref IS NOT NULL AND c.reversed_at IS NULL
        AND NOT (c.statement_line_id <=> l.id)
        AND NOT (c.statement_line_id IS NULL AND c.deposit_account_id = l.deposit_account_id)
        ${scope ? 'AND (c.deposit_account_id = ? OR l.deposit_account_id = ?)' : ''}
      ORDER BY c.id`,
    scope ? [scope.depositAccountId, scope.depositAccountId] : []
  )
  const of = (path: string, order: string | null) => (order ? `${path}, ${order}` : path)
  return (claims as Array<Record<string, any>>).map((row) => ({
    kind: 'transfer_claimed_twice' as const,
    detail:
      `claim ${row.id} (${of(row.path, row.platform_order_id)}) names the transfer ${row.trans_ref}, ` +
      `which is statement line #${row.line_id} of deposit account ${row.line_account}, taken by claim ` +
      `${row.taken_by} (${of(row.taken_path, row.taken_order)}): one transfer credited twice`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
