import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount, { type DepositChannel } from '#payments/models/deposit_account'
import { windowsInEffect } from '#payments/maintenance_windows'
import { GATEWAY_ZONE } from '#core/clock'

export type ReservationRefusal = 'inactive' | 'limit' | 'no_slot'

/**
 * Active accounts of a deposit group that can take `amount` on one of
 * `channels` now, best first: accounts with room under their hourly and
 * daily limits before those without (a capped account leaves the front until
 * the next Bangkok hour or day, and is tried only when nothing else took the
 * order, so that such a create still ends in 429), then higher priority, then
 * a random order within a priority so that load spreads over equal accounts.
 * Accounts inside a maintenance window are left out.
 */
export async function eligibleAccounts(
  group: string,
  channels: DepositChannel[],
  amount: number,
  now: DateTime = DateTime.utc()
) {
  const accounts = await DepositAccount.query()
    .where('deposit_group', group)
    .where('active', true)
    .whereIn('channel', channels)
    .where('min_amount', '<=', amount)
    .where((query) => query.whereNull('max_amount').orWhere('max_amount', '>=', amount))
    .whereNotExists(windowsInEffect(now))
  const usage = await periodUsage(db.connection(), accounts.filter(hasLimits), now)
  return accounts
    .map((account) => ({
      account,
      room: hasRoom(account, usage.get(account.id), amount),
      tiebreak: Math.random(),
    }))
    .sort(
      (a, b) =>
        Number(b.room) - Number(a.room) ||
        b.account.priority - a.account.priority ||
        a.tiebreak - b.tiebreak
    )
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

/** Orders and THB drawn on an account in the current Bangkok hour and day. */
export interface PeriodUsage {
  hourCount: number
  hourAmount: number
  dayCount: number
  dayAmount: number
}

const NO_USAGE: PeriodUsage = { hourCount: 0, hourAmount: 0, dayCount: 0, dayAmount: 0 }

/**
 * Usage of each account in the current clock hour and calendar day (Bangkok
 * time), by account id, in one grouped query. Every order created counts,
 * whatever became of it (the limits cap what is drawn on an account).
 */
export async function periodUsage(
  client: QueryClientContract,
  accounts: Array<Pick<DepositAccount, 'id'>>,
  now: DateTime = DateTime.utc()
): Promise<Map<number, PeriodUsage>> {
  const usage = new Map<number, PeriodUsage>()
  if (accounts.length === 0) return usage
  const local = now.setZone(GATEWAY_ZONE)
  const hourStart = local.startOf('hour').toUTC().toJSDate()
  const dayStart = local.startOf('day').toUTC().toJSDate()
  const ids = accounts.map((account) => account.id)
  const [rows] = await client.rawQuery(
    `SELECT deposit_account_id,
            COUNT(*) AS day_count,
            COALESCE(SUM(transfer_amount), 0) AS day_amount,
            COALESCE(SUM(created_at >= ?), 0) AS hour_count,
            COALESCE(SUM(IF(created_at >= ?, transfer_amount, 0)), 0) AS hour_amount
       FROM payment_orders
      WHERE deposit_account_id IN (${ids.map(() => '?').join(', ')}) AND created_at >= ?
      GROUP BY deposit_account_id`,
    [hourStart, hourStart, ...ids, dayStart]
  )
  for (const row of rows) {
    usage.set(Number(row.deposit_account_id), {
      hourCount: Number(row.hour_count),
      hourAmount: Number(row.hour_amount),
      dayCount: Number(row.day_count),
      dayAmount: Number(row.day_amount),
    })
  }
  return usage
}

function hasLimits(account: DepositAccount) {
  return (
    account.hourlyCountLimit !== null ||
    account.hourlyAmountLimit !== null ||
    account.dailyCountLimit !== null ||
    account.dailyAmountLimit !== null
  )
}

/** Whether one more order of `amount` stays within every hourly and daily limit. */
export function hasRoom(
  account: Pick<
    DepositAccount,
    'hourlyCountLimit' | 'hourlyAmountLimit' | 'dailyCountLimit' | 'dailyAmountLimit'
  >,
  usage: PeriodUsage = NO_USAGE,
  amount: number
) {
  const exceeds = (limit: number | null, used: number, add: number) =>
    limit !== null && used + add > limit
  return !(
    exceeds(account.hourlyCountLimit, usage.hourCount, 1) ||
    exceeds(account.dailyCountLimit, usage.dayCount, 1) ||
    exceeds(account.hourlyAmountLimit, usage.hourAmount, amount) ||
    exceeds(account.dailyAmountLimit, usage.dayAmount, amount)
  )
}

/** Hourly and daily (calendar, Bangkok time) count and amount limits, including this order. */
export async function withinLimits(
  trx: TransactionClientContract,
  account: DepositAccount,
  transferAmount: number,
  now: DateTime = DateTime.utc()
): Promise<boolean> {
  if (!hasLimits(account)) return true
  const usage = await periodUsage(trx, [account], now)
  return hasRoom(account, usage.get(account.id), transferAmount)
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
