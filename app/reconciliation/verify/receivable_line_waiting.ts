import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { claimScope, POSTED } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * A receivable whose transfer (the slip's transaction reference) is on the
 * statement: its line is either another claim's, the money taken twice
 * (receipt_claimed_twice), or waits unclaimed for the receivable
 * (receivable_line_waiting: an operator attaches it).
 */
export async function checkReceivableLines(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const claims = claimScope(scope)
  const [named] = await trx.rawQuery(
    `SELECT c.id, c.trans_ref, c.deposit_account_id, o.platform_order_id, l.id AS line_id, t.id AS taken_by
       FROM receipt_claims c
       JOIN statement_lines l ON l.deposit_account_id = c.deposit_account_id
        AND l.trans_ref = c.trans_ref AND l.direction = 'credit' AND ${POSTED('l')}
       LEFT JOIN receipt_claims t ON t.statement_line_id = l.id
       LEFT JOIN payment_orders o ON o.id = c.payment_order_id
      WHERE c.statement_line_id IS NULL AND c.reversed_at IS NULL AND c.trans_ref IS NOT NULL${claims.where}`,
    claims.bindings
  )
  return (named as Array<Record<string, any>>).map((row): Problem => {
    const owner = row.platform_order_id ?? `claim ${row.id}`
    return row.taken_by === null
      ? {
          kind: 'receivable_line_waiting',
          detail: `statement line #${row.line_id} is the transfer ${row.trans_ref} that ${owner} was credited for, and waits unclaimed: attach it to ${owner}`,
          depositAccountId: Number(row.deposit_account_id),
        }
      : {
          kind: 'receipt_claimed_twice',
          detail: `statement line #${row.line_id} is the transfer ${row.trans_ref} that ${owner} was credited for, and claim ${row.taken_by} took it too`,
          depositAccountId: Number(row.deposit_account_id),
        }
  })
}
