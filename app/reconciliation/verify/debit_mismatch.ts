import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { lineScope, sum } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/** A transfer's confirming line is a debit of the transfer's amount. */
export async function checkDebitConfirmations(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const [misfits] = await trx.rawQuery(
    `SELECT p.id, p.statement_line_id, p.amount, l.amount AS line_amount, l.direction,
            l.deposit_account_id
       FROM statement_lines l ${lines.index} JOIN payout_confirmations p ON p.statement_line_id = l.id
      WHERE (l.direction <> 'debit' OR l.amount <> p.amount)${lines.where}`,
    lines.bindings as any[]
  )
  return (misfits as Array<Record<string, any>>).map((row) => ({
    kind: 'debit_mismatch' as const,
    detail: `statement line #${row.statement_line_id} (${row.direction}, ${formatThb(sum(row.line_amount))} THB) confirms a transfer of ${formatThb(sum(row.amount))} THB`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
