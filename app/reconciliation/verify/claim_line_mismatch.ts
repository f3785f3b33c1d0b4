import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { lineScope, sum } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/** A claim's line is a credit of the claim's account, with the amount the claim received. */
export async function checkClaimLines(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const [misfits] = await trx.rawQuery(
    `SELECT c.id, c.statement_line_id, c.deposit_account_id, c.received_amount,
            l.deposit_account_id AS line_account, l.direction, l.amount
       FROM statement_lines l ${lines.index}
       JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE (l.deposit_account_id <> c.deposit_account_id OR l.direction <> 'credit'
         OR c.received_amount IS NULL OR l.amount <> c.received_amount)${lines.where}`,
    lines.bindings as any[]
  )
  return (misfits as Array<Record<string, any>>).map((row) => ({
    kind: 'claim_line_mismatch' as const,
    detail: `claim ${row.id} takes statement line #${row.statement_line_id} (${row.direction}, ${formatThb(sum(row.amount))} THB, account ${row.line_account}) as ${formatThb(sum(row.received_amount))} THB received on account ${row.deposit_account_id}`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
