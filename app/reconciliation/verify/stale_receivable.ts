import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { receivableAge } from '#reconciliation/receivable_window'
import { sum } from '#reconciliation/verify/sql'
import type { CheckScope, OpenReceivableItem, Problem } from '#reconciliation/verify/types'

/**
 * The open receivables (credited before their line, neither cleared nor
 * reversed), the oldest first, with their age; those past the window
 * (receivable_window.ts) are stale_receivable.
 */
export async function checkOpenReceivables(
  trx: TransactionClientContract,
  scope: CheckScope | undefined,
  now: Date,
  windowHours: number
): Promise<{ problems: Problem[]; openReceivables: OpenReceivableItem[] }> {
  const receivables = await trx
    .from('receipt_claims as c')
    .leftJoin('payment_orders as o', 'o.id', 'c.payment_order_id')
    .whereNull('c.statement_line_id')
    .whereNull('c.reversed_at')
    .if(scope, (query) => query.where('c.deposit_account_id', scope!.depositAccountId))
    .orderBy('c.claimed_at')
    .orderBy('c.id')
    .select(
      'c.id',
      'c.deposit_account_id',
      'c.expected_amount',
      'c.claimed_at',
      'o.platform_order_id'
    )
  const openReceivables = receivables.map((row): OpenReceivableItem => {
    const claimedAt = new Date(row.claimed_at)
    return {
      claimId: Number(row.id),
      depositAccountId: Number(row.deposit_account_id),
      platformOrderId: row.platform_order_id ?? null,
      amount: sum(row.expected_amount),
      claimedAt,
      ...receivableAge(claimedAt, now, windowHours),
    }
  })
  const problems = openReceivables
    .filter((receivable) => receivable.stale)
    .map((item) => ({
      kind: 'stale_receivable' as const,
      detail: `${item.platformOrderId ?? `claim ${item.claimId}`} was credited ${formatThb(item.amount)} THB ${Math.floor(item.ageHours)} h ago and its bank line has not arrived (window ${windowHours} h)`,
      depositAccountId: item.depositAccountId,
    }))
  return { problems, openReceivables }
}
