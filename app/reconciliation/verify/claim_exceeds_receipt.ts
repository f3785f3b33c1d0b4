import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { lineScope, sum } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * A claim never gives away more than its receipt brought: what the merchant
 * was credited plus the fee taken from it is at most what the bank received.
 */
export async function checkClaimsWithinReceipt(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const [excess] = await trx.rawQuery(
    `SELECT c.id, c.statement_line_id, c.deposit_account_id, c.credited, c.fee, c.received_amount
       FROM statement_lines l ${lines.index}
       JOIN receipt_claims c ON c.statement_line_id = l.id
      WHERE c.reversed_at IS NULL AND c.received_amount IS NOT NULL
        AND c.credited + c.fee > c.received_amount${lines.where}`,
    lines.bindings as any[]
  )
  return (excess as Array<Record<string, any>>).map((row) => ({
    kind: 'claim_exceeds_receipt' as const,
    detail: `claim ${row.id} credits ${formatThb(sum(row.credited))} THB + ${formatThb(sum(row.fee))} THB fee from statement line #${row.statement_line_id}, which brought ${formatThb(sum(row.received_amount))} THB`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
