import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { hasRoom } from '#payments/deposit_pool'
import { describeTarget, depositAccountSnapshot } from '#payments/deposit_account_snapshot'
import type { DepositAccountUsage } from '#payments/deposit_account_usage'
import { formatGatewayDateTime, gatewayPeriodStarts } from '#core/clock'
import { formatThb } from '#core/money'

/**
 * The pool screens' queries: accounts by deposit group (filtered, sorted
 * within a group, a page at a time), the maintenance windows around them,
 * and each account's usage as figures with a meter.
 */

export interface PoolFilters {
  group?: string
  channel?: string
  bank?: string
  /** "yes": active accounts only, "no": inactive only. */
  active?: string
}

/** Orders within a deposit group: priority (the selection order) or the fullest limit. */
export const POOL_SORTS = ['priority', 'usage', 'id'] as const
export type PoolSort = (typeof POOL_SORTS)[number]

/**
 * Accounts matching the filters, grouped by deposit group and sorted within
 * each group. "usage" puts first the account closest to one of its hourly
 * or daily limits (the fraction used, this Bangkok hour and day), computed
 * in SQL so that the order holds across pages.
 */
export function poolQuery(
  filters: PoolFilters,
  sort: PoolSort,
  dir: 'asc' | 'desc',
  now: DateTime = DateTime.utc()
) {
  const query = DepositAccount.query()
    .if(filters.group, (q) => q.where('deposit_group', filters.group!))
    .if(filters.channel, (q) => q.where('channel', filters.channel!))
    .if(filters.bank, (q) => q.where('bank', filters.bank!))
    .if(filters.active === 'yes', (q) => q.where('active', true))
    .if(filters.active === 'no', (q) => q.where('active', false))
    .orderBy('deposit_group')
  if (sort === 'usage') {
    const { hourStart, dayStart } = gatewayPeriodStarts(now)
    // Each fraction is NULL (then 0) when the limit is unlimited.
    const used = (aggregate: string, since: Date, limit: string) => ({
      sql: `COALESCE((SELECT ${aggregate} FROM payment_orders AS usage_orders
                      WHERE usage_orders.deposit_account_id = deposit_accounts.id
                        AND usage_orders.created_at >= ?) / deposit_accounts.${limit}, 0)`,
      binding: since,
    })
    const fractions = [
      used('COUNT(*)', hourStart, 'hourly_count_limit'),
      used('SUM(transfer_amount)', hourStart, 'hourly_amount_limit'),
      used('COUNT(*)', dayStart, 'daily_count_limit'),
      used('SUM(transfer_amount)', dayStart, 'daily_amount_limit'),
    ]
    query.orderByRaw(
      `GREATEST(${fractions.map((fraction) => fraction.sql).join(', ')}) ${dir}`,
      fractions.map((fraction) => fraction.binding)
    )
  } else if (sort === 'priority') {
    query.orderBy('priority', dir)
  }
  return query.orderBy('id', sort === 'id' ? dir : 'asc')
}

/** The deposit groups of the pool with their number of accounts (the group filter, headings). */
export async function poolGroups() {
  const rows = await db
    .from('deposit_accounts')
    .groupBy('deposit_group')
    .orderBy('deposit_group')
    .select('deposit_group')
    .count('* as total')
  return rows.map((row) => ({ name: String(row.deposit_group), total: Number(row.total) }))
}

/** Windows cancelled most recently (the screen shows them apart from those in effect). */
export async function recentlyCancelledWindows(limit = 10) {
  return MaintenanceWindow.query()
    .whereNotNull('cancelled_at')
    .orderBy('cancelled_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
}

/** Windows in effect or to come that take `account` out (its own or its bank's). */
export async function windowsOfAccount(account: DepositAccount, now = DateTime.utc()) {
  return MaintenanceWindow.query()
    .whereNull('cancelled_at')
    .where('ends_at', '>', now.toJSDate())
    .where((owner) => owner.where('deposit_account_id', account.id).orWhere('bank', account.bank))
    .orderBy('starts_at')
    .orderBy('id')
}

/** One figure beside its limit: "2 / 3", how full (percent), and whether it is nearly full. */
export interface UsageFigure {
  text: string
  /** Rounded; null when unlimited. */
  percent: number | null
  /** The meter's length: the percent rounded up to a multiple of 5 (a little use shows). */
  step: number
  high: boolean
}

/** From this fraction of a limit on, a meter shows the account as nearly full. */
const HIGH_USAGE = 0.8

function meter(text: string, value: number, limit: number | null): UsageFigure {
  if (limit === null) return { text, percent: null, step: 0, high: false }
  const fraction = limit > 0 ? value / limit : 1
  return {
    text,
    percent: Math.round(fraction * 100),
    step: Math.min(100, Math.ceil(fraction * 20) * 5),
    high: fraction >= HIGH_USAGE,
  }
}

function figure(
  used: string,
  value: number,
  limit: number | null,
  shown: (limit: number) => string = String
) {
  return meter(limit === null ? '—' : `${used} / ${shown(limit)}`, value, limit)
}

/**
 * Whether no order the account accepts (min_amount) fits under its hourly,
 * resp. daily, limits any more: selection then leaves it out until the next
 * Bangkok hour, resp. day.
 */
export function capsReached(account: DepositAccount, usage: DepositAccountUsage) {
  const period = {
    hourCount: usage.hour.count,
    hourAmount: usage.hour.amount,
    dayCount: usage.day.count,
    dayAmount: usage.day.amount,
  }
  const none = { count: null, amount: null }
  const fits = (
    hour: { count: number | null; amount: number | null },
    day: { count: number | null; amount: number | null }
  ) =>
    hasRoom(
      {
        hourlyCountLimit: hour.count,
        hourlyAmountLimit: hour.amount,
        dailyCountLimit: day.count,
        dailyAmountLimit: day.amount,
      },
      period,
      account.minAmount
    )
  return {
    hour: !fits({ count: account.hourlyCountLimit, amount: account.hourlyAmountLimit }, none),
    day: !fits(none, { count: account.dailyCountLimit, amount: account.dailyAmountLimit }),
  }
}

/** An account as a row of the pool screens: its fields, where the money goes, usage and state. */
export function poolRow(account: DepositAccount, usage: DepositAccountUsage) {
  const amount = (satang: number) => formatThb(satang)
  const limit = (satang: number | null) => (satang === null ? null : formatThb(satang))
  const slots = usage.slots
  return {
    id: account.id,
    ...depositAccountSnapshot(account),
    target: describeTarget(account),
    // For reading; the snapshot's plain amounts fill the edit form, which parses them back.
    shown: {
      min_amount: formatThb(account.minAmount),
      max_amount: limit(account.maxAmount),
      hourly_amount_limit: limit(account.hourlyAmountLimit),
      daily_amount_limit: limit(account.dailyAmountLimit),
    },
    maintenance_until: formatGatewayDateTime(usage.maintenanceUntil),
    caps: capsReached(account, usage),
    usage: {
      hour_count: figure(String(usage.hour.count), usage.hour.count, usage.hour.countLimit),
      hour_amount: figure(
        amount(usage.hour.amount),
        usage.hour.amount,
        usage.hour.amountLimit,
        amount
      ),
      day_count: figure(String(usage.day.count), usage.day.count, usage.day.countLimit),
      day_amount: figure(amount(usage.day.amount), usage.day.amount, usage.day.amountLimit, amount),
      // Bill payments are told apart by reference: no transfer_amount slot is taken.
      slots: account.billerId
        ? meter('by reference', 0, null)
        : slots
          ? meter(
              `${slots.taken} of ${slots.of} at ${formatThb(slots.amount)}`,
              slots.taken,
              slots.of
            )
          : meter('none taken', 0, account.maxAdjustment + 1),
    },
  }
}

export type PoolRow = ReturnType<typeof poolRow>
