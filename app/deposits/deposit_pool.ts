import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount, { type DepositChannel } from '#models/deposit_account'
import { GATEWAY_ZONE } from '#services/clock'

export type ReservationRefusal = 'inactive' | 'limit' | 'no_slot'

/**
 * Active accounts of a deposit group that can take `amount` on one of
 * `channels`, best first: higher priority, then a random order within a
 * priority so that load spreads over equal accounts.
 */
export async function eligibleAccounts(group: string, channels: DepositChannel[], amount: number) {
  const accounts = await DepositAccount.query()
    .where('deposit_group', group)
    .where('active', true)
    .whereIn('channel', channels)
    .where('min_amount', '<=', amount)
    .where((query) => query.whereNull('max_amount').orWhere('max_amount', '>=', amount))
  return accounts
    .map((account) => ({ account, tiebreak: Math.random() }))
    .sort((a, b) => b.account.priority - a.account.priority || a.tiebreak - b.tiebreak)
    .map(({ account }) => account)
}

/**
 * Locks the account row for the rest of the caller's transaction: every
 * reservation on one account (limits and transfer_amount slots) is serialised
 * by this lock, in every process. Returns the fresh row or null if inactive.
 */
export async function lockAccount(trx: TransactionClientContract, accountId: number) {
  const account = await DepositAccount.query({ client: trx })
    .where('id', accountId)
    .forUpdate()
    .first()
  return account && account.active ? account : null
}

/** Hourly and daily (calendar, Bangkok time) count and amount limits, including this order. */
export async function withinLimits(
  trx: TransactionClientContract,
  account: DepositAccount,
  transferAmount: number,
  now: DateTime = DateTime.utc()
): Promise<boolean> {
  const local = now.setZone(GATEWAY_ZONE)
  const hourStart = local.startOf('hour').toUTC().toJSDate()
  const dayStart = local.startOf('day').toUTC().toJSDate()
  const [[usage]] = await trx.rawQuery(
    `SELECT COUNT(*) AS day_count,
            COALESCE(SUM(transfer_amount), 0) AS day_amount,
            COALESCE(SUM(created_at >= ?), 0) AS hour_count,
            COALESCE(SUM(IF(created_at >= ?, transfer_amount, 0)), 0) AS hour_amount
       FROM payment_orders
      WHERE deposit_account_id = ? AND created_at >= ?`,
    [hourStart, hourStart, account.id, dayStart]
  )
  const exceeds = (limit: number | null, used: unknown, add: number) =>
    limit !== null && Number(used) + add > limit
  return !(
    exceeds(account.hourlyCountLimit, usage.hour_count, 1) ||
    exceeds(account.dailyCountLimit, usage.day_count, 1) ||
    exceeds(account.hourlyAmountLimit, usage.hour_amount, transferAmount) ||
    exceeds(account.dailyAmountLimit, usage.day_amount, transferAmount)
  )
}

/**
 * The smallest amount + k satang (0 ≤ k ≤ max_adjustment) that no open order
 * on this account holds. Must run under lockAccount().
 */
export async function freeTransferAmount(
  trx: TransactionClientContract,
  account: DepositAccount,
  amount: number
): Promise<number | null> {
  const rows = await trx
    .from('payment_orders')
    .where('deposit_account_id', account.id)
    .whereBetween('slot_amount', [amount, amount + account.maxAdjustment])
    .select('slot_amount')
  const taken = new Set(rows.map((row) => Number(row.slot_amount)))
  for (let k = 0; k <= account.maxAdjustment; k++) {
    if (!taken.has(amount + k)) return amount + k
  }
  return null
}
