import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { lineScope } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/** Every credit line the matcher or an operator gave away is claimed. */
export async function checkLinesGivenClaimed(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const [given] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.status, l.decision FROM statement_lines l ${lines.index}
      LEFT JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE l.direction = 'credit' AND c.id IS NULL
        AND (l.decision IS NOT NULL OR (l.status = 'matched' AND l.order_type = 'payment'))${lines.where}`,
    lines.bindings as any[]
  )
  return (given as Array<Record<string, any>>).map((row) => ({
    kind: 'line_given_unclaimed' as const,
    detail: `statement line #${row.id} is ${row.decision ?? row.status} but no claim takes it`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
