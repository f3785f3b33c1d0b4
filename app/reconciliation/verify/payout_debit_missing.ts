import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import { formatGatewayDateTime, gatewayPeriodStarts } from '#core/clock'
import { sum } from '#reconciliation/verify/sql'
import type { Problem } from '#reconciliation/verify/types'

/**
 * Bank days (GMT+7) a payout marked successful by an operator
 * (`payouts:complete`) may wait for the debit line that shows the money
 * left: the day it was completed and this many after it. Later, verify
 * fails on it (payout_debit_missing).
 */
export const PAYOUT_DEBIT_WINDOW_BANK_DAYS = 3

/**
 * A payout marked successful on an operator's word: its debit line comes
 * within the window, or the money may never have left. An open row has no
 * account yet (its line names it): unscoped only.
 */
export async function checkPayoutDebits(
  trx: TransactionClientContract,
  now: Date,
  debitWindowBankDays = PAYOUT_DEBIT_WINDOW_BANK_DAYS
): Promise<Problem[]> {
  const cutoff = new Date(
    gatewayPeriodStarts(now).dayStart.getTime() - debitWindowBankDays * 86_400_000
  )
  const [byHand] = await trx.rawQuery(
    `SELECT p.id, p.actor, p.amount, p.created_at, o.kind, o.platform_order_id
       FROM payout_confirmations p JOIN payout_orders o ON o.id = p.payout_order_id
      WHERE p.statement_line_id IS NULL AND p.path = 'by_hand' AND p.created_at < ?
      ORDER BY p.id`,
    [cutoff]
  )
  return (byHand as Array<Record<string, any>>).map((row) => ({
    kind: 'payout_debit_missing' as const,
    detail:
      `${row.kind} ${row.platform_order_id} was marked successful by ${row.actor} on ` +
      `${formatGatewayDateTime(new Date(row.created_at))} and no debit line of ${formatThb(sum(row.amount))} THB ` +
      `has confirmed it within ${debitWindowBankDays} bank days (payout confirmation ${row.id}): ` +
      `import the statements since, or confirm its line (lines:confirm <line> --payout=${row.platform_order_id})`,
  }))
}
