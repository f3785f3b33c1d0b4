import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { lineScope, POSTED, sum } from '#reconciliation/verify/sql'
import type { CheckScope, LineTotal, Problem } from '#reconciliation/verify/types'

/**
 * Money out (docs/reconciliation.md, "Money out"): every debit line is
 * accounted for by a payout, a return or an explanation
 * (payout_confirmations); the rest are unexplained_debit, and their total
 * is part of what payout_clearing holds (clearing_drift.ts).
 */
export async function checkDebitLines(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<{ problems: Problem[]; unexplained: LineTotal }> {
  const lines = lineScope(scope)
  const [debits] = await trx.rawQuery(
    `SELECT l.id, l.deposit_account_id, l.amount, l.line_at FROM statement_lines l ${lines.index}
      LEFT JOIN payout_confirmations p ON p.statement_line_id = l.id
      WHERE l.direction = 'debit' AND p.id IS NULL AND ${POSTED('l')}${lines.where} ORDER BY l.id`,
    lines.bindings as any[]
  )
  let amount = 0
  const problems: Problem[] = []
  for (const row of debits) {
    amount += sum(row.amount)
    problems.push({
      kind: 'unexplained_debit',
      detail: `statement line #${row.id}: ${formatThb(sum(row.amount))} THB left deposit account ${row.deposit_account_id} and no payout, return or explanation accounts for it`,
      depositAccountId: Number(row.deposit_account_id),
    })
  }
  return { problems, unexplained: { lines: debits.length, amount } }
}
