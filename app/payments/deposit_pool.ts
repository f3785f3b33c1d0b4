import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount, { type DepositChannel } from '#payments/models/deposit_account'
import { windowsInEffect } from '#payments/maintenance_windows'
import {
  addOrderToUsageStatement,
  counterUsage,
  type PeriodUsage,
} from '#payments/deposit_usage_counters'
import { refusedColumn, statement, type Statement } from '#core/sql_batch'
import { depositPools } from '#payments/deposit_pool_cache'
import { gatewayPeriodStarts } from '#core/clock'
import type { ProcessCache } from '#core/process_cache'

export type { PeriodUsage } from '#payments/deposit_usage_counters'

/** The deposit pools cache as eligibleAccounts() fills it: model rows (deposit_pool_cache.ts). */
const pools = depositPools as ProcessCache<string, DepositAccount[]>

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
  at?: DateTime
) {
  const now = at ?? DateTime.utc()
  // A given time is a question about that time: never answered from the cache.
  const pool = at
    ? await activePool(group, now)
    : await pools.get(group, () => activePool(group, now))
  const accounts = pool.filter(
    (account) =>
      channels.includes(account.channel) &&
      account.minAmount <= amount &&
      (account.maxAmount === null || account.maxAmount >= amount)
  )
  const usage = await counterUsage(db.connection(), accounts.filter(hasLimits), now)
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

/** A deposit group's active accounts outside a maintenance window at `now`. */
async function activePool(group: string, now: DateTime) {
  return await DepositAccount.query()
    .where('deposit_group', group)
    .where('active', true)
    .whereNotExists(windowsInEffect(now))
}

/**
 * The statement that reads the account row for a create, share-locked to the
 * end of the caller's transaction: creates on one account do not wait for
 * one another (slots and limit counters have their own row locks), while an
 * operator's change of the account waits for the creates in flight and the
 * creates after it see the change. lockedAccount() reads its result.
 */
export function lockAccountStatement(accountId: number, columns: '*' | 'id' = '*') {
  return statement(`SELECT ${columns} FROM deposit_accounts WHERE id = ? LOCK IN SHARE MODE`, [
    accountId,
  ])
}

/**
 * The account's id if its row still says, active, what `account` (a cached
 * copy) says of everything an order takes from it: channel, receiving bank
 * account, PromptPay or biller id, limits; NULL otherwise. In the order's
 * deposit_account_id (NOT NULL) it refuses an order built from a stale copy,
 * which CreatePayment then builds again from the locked row.
 */
export function unchangedAccountExpression(account: DepositAccount) {
  return statement(
    `(SELECT IF(active = 1 AND channel = ? AND bank = ? AND account_no = ? AND BINARY account_name = ?
        AND promptpay_id <=> ? AND biller_id <=> ?
        AND hourly_count_limit <=> ? AND hourly_amount_limit <=> ?
        AND daily_count_limit <=> ? AND daily_amount_limit <=> ?, id, NULL)
       FROM deposit_accounts WHERE id = ?)`,
    [
      account.channel,
      account.bank,
      account.accountNo,
      account.accountName,
      account.promptpayId,
      account.billerId,
      account.hourlyCountLimit,
      account.hourlyAmountLimit,
      account.dailyCountLimit,
      account.dailyAmountLimit,
      account.id,
    ]
  )
}

/** Whether an order insert was refused by unchangedAccountExpression(). */
export function isStaleAccount(error: unknown) {
  return refusedColumn(error) === 'deposit_account_id'
}

/** The fresh account row lockAccountStatement() read, or null if it is gone or inactive. */
export function lockedAccount(rows: Array<Record<string, unknown>>) {
  if (rows.length === 0) return null
  const account = DepositAccount.$createFromAdapterResult(rows[0])!
  return account.active ? account : null
}

const NO_USAGE: PeriodUsage = { hourCount: 0, hourAmount: 0, dayCount: 0, dayAmount: 0 }

/**
 * Usage of each account in the current clock hour and calendar day (Bangkok
 * time), by account id, in one grouped query over the orders. Every order
 * created counts, whatever became of it (the limits cap what is drawn on an
 * account). The operator screens show this recount; payment create reads the
 * same figures from deposit_usage_counters, which every create keeps equal to
 * it (deposit-usage:verify).
 */
export async function periodUsage(
  client: QueryClientContract,
  accounts: Array<Pick<DepositAccount, 'id'>>,
  now: DateTime = DateTime.utc()
): Promise<Map<number, PeriodUsage>> {
  const usage = new Map<number, PeriodUsage>()
  if (accounts.length === 0) return usage
  const { hourStart, dayStart } = gatewayPeriodStarts(now)
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

/**
 * Whether one more order of `amount` stays within every hourly and daily
 * limit. A create applies the same rule under the counters' row locks, in
 * addOrderToUsageStatement()'s SQL; this one ranks accounts and serves the
 * operator screens.
 */
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

/**
 * The statement that counts an order of `transferAmount` created at
 * `createdAt` against the account's hourly and daily (calendar, Bangkok
 * time) limits, refused (isLimitRefusal) when it would exceed one; null when
 * this order alone exceeds one. The counters are kept for accounts without
 * limits too: the figures stay right when a limit is set later.
 */
export function countOrderStatement(
  account: DepositAccount,
  transferAmount: number,
  createdAt: DateTime,
  /** The amount the batch chooses (CHOSEN_SLOT), at least `transferAmount`. */
  chosenAmount?: Statement
) {
  if (!hasRoom(account, NO_USAGE, transferAmount)) return null
  return addOrderToUsageStatement(account.id, chosenAmount ?? transferAmount, createdAt, account)
}
