import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import { periodUsage, type PeriodUsage } from '#payments/deposit_pool'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'

/**
 * The deposit-account pool as the operator screens show it: the accounts,
 * and how much of each limit and of the transfer_amount slots they use now.
 * Figures for a page of accounts come from a few grouped queries, whatever
 * the number of accounts.
 */

export async function listDepositAccounts(filter: { group?: string } = {}) {
  return DepositAccount.query()
    .if(filter.group !== undefined, (query) => query.where('deposit_group', filter.group!))
    .orderBy('deposit_group')
    .orderBy('priority', 'desc')
    .orderBy('id')
}

interface PeriodFigures {
  count: number
  countLimit: number | null
  amount: number
  amountLimit: number | null
}

export interface DepositAccountUsage {
  /** The current Bangkok clock hour. */
  hour: PeriodFigures
  /** The current Bangkok calendar day. */
  day: PeriodFigures
  /**
   * The amount whose transfer_amount slots (amount + 0 … max_adjustment
   * satang) are the most taken by open orders: `taken` of `of` at `amount`.
   * Null when no open order holds a slot.
   */
  slots: { amount: number; taken: number; of: number } | null
  /** The end of the maintenance window the account is in now, if any. */
  maintenanceUntil: DateTime | null
}

/** Usage of each of `accounts` at `now`, by account id. */
export async function depositAccountUsage(
  accounts: DepositAccount[],
  now: DateTime = DateTime.utc()
): Promise<Map<number, DepositAccountUsage>> {
  const usage = new Map<number, DepositAccountUsage>()
  if (accounts.length === 0) return usage
  const client = db.connection()
  const [periods, slots, maintenance] = await Promise.all([
    periodUsage(client, accounts, now),
    fullestSlots(accounts),
    maintenanceEnds(accounts, now),
  ])
  for (const account of accounts) {
    const period: PeriodUsage = periods.get(account.id) ?? {
      hourCount: 0,
      hourAmount: 0,
      dayCount: 0,
      dayAmount: 0,
    }
    usage.set(account.id, {
      hour: {
        count: period.hourCount,
        countLimit: account.hourlyCountLimit,
        amount: period.hourAmount,
        amountLimit: account.hourlyAmountLimit,
      },
      day: {
        count: period.dayCount,
        countLimit: account.dailyCountLimit,
        amount: period.dayAmount,
        amountLimit: account.dailyAmountLimit,
      },
      slots: slots.get(account.id) ?? null,
      maintenanceUntil: maintenance.get(account.id) ?? null,
    })
  }
  return usage
}

/**
 * For each account, the amount in use (the amount of an open order) whose
 * slot range holds the most open orders. Slot ranges of neighbouring amounts
 * overlap (500.01 may sit in the slots of 500.00), so each range is counted
 * over every open order of the account.
 */
async function fullestSlots(accounts: DepositAccount[]) {
  const ids = accounts.map((account) => account.id)
  const [rows] = await db.rawQuery(
    `SELECT bases.deposit_account_id, bases.amount, COUNT(*) AS taken
       FROM (SELECT DISTINCT deposit_account_id, amount
               FROM payment_orders
              WHERE deposit_account_id IN (${ids.map(() => '?').join(', ')})
                AND slot_amount IS NOT NULL) AS bases
       JOIN deposit_accounts AS accounts ON accounts.id = bases.deposit_account_id
       JOIN payment_orders AS held
         ON held.deposit_account_id = bases.deposit_account_id
        AND held.slot_amount BETWEEN bases.amount AND bases.amount + accounts.max_adjustment
      GROUP BY bases.deposit_account_id, bases.amount
      ORDER BY taken DESC, bases.amount`,
    ids
  )
  const maxAdjustment = new Map(accounts.map((account) => [account.id, account.maxAdjustment]))
  const fullest = new Map<number, { amount: number; taken: number; of: number }>()
  for (const row of rows) {
    const id = Number(row.deposit_account_id)
    if (fullest.has(id)) continue
    fullest.set(id, {
      amount: Number(row.amount),
      taken: Number(row.taken),
      of: maxAdjustment.get(id)! + 1,
    })
  }
  return fullest
}

/** For each account inside a maintenance window now (its own or its bank's), when it ends. */
async function maintenanceEnds(accounts: DepositAccount[], now: DateTime) {
  const ids = accounts.map((account) => account.id)
  const at = now.toJSDate()
  const [rows] = await db.rawQuery(
    `SELECT accounts.id, MAX(windows.ends_at) AS ends_at
       FROM deposit_accounts AS accounts
       JOIN deposit_maintenance_windows AS windows
         ON windows.deposit_account_id = accounts.id OR windows.bank = accounts.bank
      WHERE accounts.id IN (${ids.map(() => '?').join(', ')})
        AND windows.cancelled_at IS NULL AND windows.starts_at <= ? AND windows.ends_at > ?
      GROUP BY accounts.id`,
    [...ids, at, at]
  )
  return new Map<number, DateTime>(
    rows.map((row: { id: number; ends_at: Date }) => [
      Number(row.id),
      DateTime.fromJSDate(row.ends_at).toUTC(),
    ])
  )
}

/** The usage as JSON (`deposit-account:list --usage --json`, the pool screen). */
export function presentUsage(usage: DepositAccountUsage) {
  const amount = (satang: number | null) => (satang === null ? null : formatAmount(satang))
  const period = (figures: PeriodFigures) => ({
    count: figures.count,
    count_limit: figures.countLimit,
    amount: formatAmount(figures.amount),
    amount_limit: amount(figures.amountLimit),
  })
  return {
    hour: period(usage.hour),
    day: period(usage.day),
    slots: usage.slots && {
      taken: usage.slots.taken,
      of: usage.slots.of,
      at: formatAmount(usage.slots.amount),
    },
    maintenance_until: formatGatewayDateTime(usage.maintenanceUntil),
  }
}

/** "hour 2/30 orders, 1000.01 THB; day 4 orders, 2000.06/10000.00 THB; slots 4 of 1000 at 500.00". */
export function describeUsage(usage: DepositAccountUsage) {
  const period = (name: string, figures: PeriodFigures) => {
    const count = figures.countLimit === null ? '' : `/${figures.countLimit}`
    const amount = figures.amountLimit === null ? '' : `/${formatAmount(figures.amountLimit)}`
    return `${name} ${figures.count}${count} orders, ${formatAmount(figures.amount)}${amount} THB`
  }
  const parts = [period('hour', usage.hour), period('day', usage.day)]
  parts.push(
    usage.slots
      ? `slots ${usage.slots.taken} of ${usage.slots.of} at ${formatAmount(usage.slots.amount)}`
      : 'slots none taken'
  )
  if (usage.maintenanceUntil) {
    parts.push(`maintenance until ${formatGatewayDateTime(usage.maintenanceUntil)}`)
  }
  return parts.join('; ')
}
