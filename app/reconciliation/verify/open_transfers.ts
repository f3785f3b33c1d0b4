import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { sum } from '#reconciliation/verify/sql'
import type { CheckScope, OpenTransferItem } from '#reconciliation/verify/types'

/**
 * The transfers out (payouts, returns to a payer) still waiting for their
 * debit line, the oldest first: part of what payout_clearing holds
 * (clearing_drift.ts) and of what the back-office shows.
 */
export async function readOpenTransfers(
  trx: TransactionClientContract,
  scope: CheckScope | undefined,
  now: Date
): Promise<OpenTransferItem[]> {
  const open = await trx
    .from('payout_confirmations as p')
    .leftJoin('payout_orders as o', 'o.id', 'p.payout_order_id')
    .whereNull('p.statement_line_id')
    .if(scope, (query) => query.where('p.deposit_account_id', scope!.depositAccountId))
    .orderBy('p.created_at')
    .select(
      'p.id',
      'p.path',
      'p.amount',
      'p.created_at',
      'p.returned_line_id',
      'o.platform_order_id'
    )
  return open.map((row): OpenTransferItem => {
    const createdAt = new Date(row.created_at)
    return {
      confirmationId: Number(row.id),
      path: row.path,
      platformOrderId: row.platform_order_id ?? null,
      returnedLineId: row.returned_line_id === null ? null : Number(row.returned_line_id),
      amount: sum(row.amount),
      createdAt,
      ageHours: (now.getTime() - createdAt.getTime()) / 3_600_000,
    }
  })
}
