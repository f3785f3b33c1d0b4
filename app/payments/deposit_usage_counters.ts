import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type DepositAccount from '#payments/models/deposit_account'
import { GATEWAY_ZONE, gatewayPeriodStarts } from '#core/clock'
import { refuseUnless, refusedColumn, statement, type Statement } from '#core/sql_batch'
import { inTransaction } from '#core/transaction'

/**
 * Limit usage as counters (deposit_usage_counters): orders and the sum of
 * their transfer_amounts per account and Bangkok clock hour, and per account
 * and Bangkok day, by the order's created_at. Every order created counts,
 * whatever became of it, as periodUsage() counts them from the orders; a
 * create adds its order in the transaction that writes it, so the counters
 * always equal that recount (deposit-usage:verify checks it).
 */

/** Orders and THB drawn on an account in the current Bangkok hour and day. */
export interface PeriodUsage {
  hourCount: number
  hourAmount: number
  dayCount: number
  dayAmount: number
}

/** An account's hourly and daily limits; null: none. */
export interface UsageLimits {
  hourlyCountLimit: number | null
  hourlyAmountLimit: number | null
  dailyCountLimit: number | null
  dailyAmountLimit: number | null
}

/** Stands for "no limit" in the statement below (BIGINT, far above any real figure). */
const UNLIMITED = Number.MAX_SAFE_INTEGER

/**
 * The statement that adds one order of `transferAmount` created at
 * `createdAt` to the account's hour and day counters, creating or bumping
 * both rows and keeping them locked to the end of the transaction, so that
 * creates on one account are counted one after the other, in every process.
 * A row that would go over its period's limit refuses the statement
 * (refusedColumn 'order_count' or 'amount'): the rule of hasRoom(), applied
 * under the counters' locks. A new row holds this order alone, which the
 * caller checks against the limits beforehand.
 */
export function addOrderToUsageStatement(
  accountId: number,
  transferAmount: number | Statement,
  createdAt: DateTime,
  limits: UsageLimits
) {
  const { hourStart, dayStart } = gatewayPeriodStarts(createdAt)
  const limit = (value: number | null) => value ?? UNLIMITED
  // An amount the batch chose (the transfer_amount slot, CreatePayment) is
  // only known inside the server: a new row checks it against the limit too.
  const amount = (periodLimit: number | null) =>
    typeof transferAmount === 'number'
      ? { sql: '?', bindings: [transferAmount] }
      : {
          sql: refuseUnless(`${transferAmount.sql} <= ?`, transferAmount.sql),
          bindings: [limit(periodLimit)],
        }
  const hour = amount(limits.hourlyAmountLimit)
  const day = amount(limits.dailyAmountLimit)
  return statement(
    `INSERT INTO deposit_usage_counters (deposit_account_id, period, period_start, order_count, amount)
     VALUES (?, 'hour', ?, 1, ${hour.sql}), (?, 'day', ?, 1, ${day.sql})
     ON DUPLICATE KEY UPDATE
       order_count = ${refuseUnless("order_count + 1 <= IF(period = 'hour', ?, ?)", 'order_count + 1')},
       amount = ${refuseUnless("amount + VALUES(amount) <= IF(period = 'hour', ?, ?)", 'amount + VALUES(amount)')}`,
    [
      accountId,
      hourStart,
      ...hour.bindings,
      accountId,
      dayStart,
      ...day.bindings,
      limit(limits.hourlyCountLimit),
      limit(limits.dailyCountLimit),
      limit(limits.hourlyAmountLimit),
      limit(limits.dailyAmountLimit),
    ]
  )
}

/** Whether addOrderToUsageStatement() was refused by a limit. */
export function isLimitRefusal(error: unknown) {
  const column = refusedColumn(error)
  return column === 'order_count' || column === 'amount'
}

/** Current Bangkok hour and day usage of each account, from the counters, by account id. */
export async function counterUsage(
  client: QueryClientContract,
  accounts: Array<Pick<DepositAccount, 'id'>>,
  now: DateTime = DateTime.utc()
) {
  return readUsage(
    client,
    accounts.map((account) => account.id),
    now
  )
}

async function readUsage(client: QueryClientContract, ids: number[], at: DateTime) {
  const usage = new Map<number, PeriodUsage>()
  if (ids.length === 0) return usage
  for (const id of ids) usage.set(id, { hourCount: 0, hourAmount: 0, dayCount: 0, dayAmount: 0 })
  const { hourStart, dayStart } = gatewayPeriodStarts(at)
  const [rows] = await client.rawQuery(
    `SELECT deposit_account_id, period, order_count, amount
       FROM deposit_usage_counters
      WHERE deposit_account_id IN (${ids.map(() => '?').join(', ')})
        AND ((period = 'hour' AND period_start = ?) OR (period = 'day' AND period_start = ?))`,
    [...ids, hourStart, dayStart]
  )
  for (const row of rows) {
    const figures = usage.get(Number(row.deposit_account_id))!
    if (row.period === 'hour') {
      figures.hourCount = Number(row.order_count)
      figures.hourAmount = Number(row.amount)
    } else {
      figures.dayCount = Number(row.order_count)
      figures.dayAmount = Number(row.amount)
    }
  }
  return usage
}

export interface UsageDrift {
  kind: 'counter' | 'slot_not_held' | 'slot_not_released'
  detail: string
}

interface CounterFigures {
  accountId: number
  period: 'hour' | 'day'
  periodStart: Date
  count: number
  amount: number
}

const key = (row: Pick<CounterFigures, 'accountId' | 'period' | 'periodStart'>) =>
  `${row.accountId}|${row.period}|${row.periodStart.getTime()}`

/**
 * Recounts the Bangkok day of `now` (its day and every hour counter) from
 * payment_orders, and the held transfer_amount slots from the open orders'
 * slot_amount, and reports where deposit_usage_counters or deposit_slots
 * differ. Reads one consistent snapshot, so a busy gateway does not report a
 * commit in flight.
 *
 * With `fix`, the counters are recounted with every counter row locked (a
 * create waits for the repair at its last step) and rewritten where they
 * differ, in one transaction; then the slots are repaired in another, by
 * two statements over the orders as they are then: a slot an order holds is
 * marked held, a held slot no order holds is freed. The two
 * steps are separate so that the repair never holds the counters while
 * waiting for a slot a create holds (the create waits for the counters).
 */
export async function verifyDepositUsage(
  options: { fix?: boolean; now?: DateTime } = {}
): Promise<{ counters: number; slots: number; drifts: UsageDrift[]; fixed: boolean }> {
  const now = options.now ?? DateTime.utc()
  if (!options.fix) {
    return db.transaction(
      async (trx) => {
        const counters = await counterDrifts(trx, now)
        const slots = await slotDrifts(trx)
        return {
          counters: counters.stored,
          slots: slots.held,
          drifts: [...counters.drifts, ...slots.drifts],
          fixed: false,
        }
      },
      { isolationLevel: 'repeatable read' }
    )
  }

  const counters = await inTransaction(
    async (trx) => {
      await trx.rawQuery('SELECT deposit_account_id FROM deposit_usage_counters FOR UPDATE')
      const found = await counterDrifts(trx, now)
      for (const figures of found.wrong) {
        await trx.rawQuery(
          `INSERT INTO deposit_usage_counters (deposit_account_id, period, period_start, order_count, amount)
           VALUES (?, ?, ?, ?, ?)
           ON DUPLICATE KEY UPDATE order_count = VALUES(order_count), amount = VALUES(amount)`,
          [figures.accountId, figures.period, figures.periodStart, figures.count, figures.amount]
        )
      }
      return found
    },
    { isolationLevel: 'repeatable read' }
  )
  const slots = await inTransaction(
    async (trx) => {
      const found = await slotDrifts(trx)
      // Two set-wise statements, whatever the number of slots to repair.
      if (found.notHeld.length > 0) {
        await trx.rawQuery(
          `INSERT INTO deposit_slots (deposit_account_id, slot_amount, held)
           SELECT orders.deposit_account_id, orders.slot_amount, 1
             FROM payment_orders AS orders
             LEFT JOIN deposit_slots AS slots
               ON slots.deposit_account_id = orders.deposit_account_id
              AND slots.slot_amount = orders.slot_amount AND slots.held = 1
            WHERE orders.slot_amount IS NOT NULL AND slots.slot_amount IS NULL
           ON DUPLICATE KEY UPDATE held = 1`
        )
      }
      if (found.notReleased.length > 0) {
        await trx.rawQuery(
          `UPDATE deposit_slots AS slots
             LEFT JOIN payment_orders AS orders
               ON orders.deposit_account_id = slots.deposit_account_id
              AND orders.slot_amount = slots.slot_amount
              SET slots.held = 0
            WHERE slots.held = 1 AND orders.id IS NULL`
        )
      }
      const [[held]] = await trx.rawQuery('SELECT COUNT(*) AS n FROM deposit_slots WHERE held = 1')
      return { ...found, held: Number(held.n) }
    },
    { isolationLevel: 'read committed' }
  )
  const drifts = [...counters.drifts, ...slots.drifts]
  return { counters: counters.stored, slots: slots.held, drifts, fixed: drifts.length > 0 }
}

/** The day's and its hours' counters beside their recount from the orders. */
async function counterDrifts(trx: TransactionClientContract, now: DateTime) {
  const { dayStart } = gatewayPeriodStarts(now)
  const dayEnd = DateTime.fromJSDate(dayStart).plus({ days: 1 }).toJSDate()
  // Bangkok is UTC+7 all year: its clock hours begin on UTC hours.
  const [hours] = await trx.rawQuery(
    `SELECT deposit_account_id, DATE_FORMAT(created_at, '%Y-%m-%d %H:00:00') AS period_start,
            COUNT(*) AS order_count, SUM(transfer_amount) AS amount
       FROM payment_orders
      WHERE created_at >= ? AND created_at < ?
      GROUP BY deposit_account_id, DATE_FORMAT(created_at, '%Y-%m-%d %H:00:00')`,
    [dayStart, dayEnd]
  )
  const recount = new Map<string, CounterFigures>()
  for (const row of hours) {
    const accountId = Number(row.deposit_account_id)
    const hour: CounterFigures = {
      accountId,
      period: 'hour',
      periodStart: new Date(`${String(row.period_start).replace(' ', 'T')}Z`),
      count: Number(row.order_count),
      amount: Number(row.amount),
    }
    recount.set(key(hour), hour)
    const day = { accountId, period: 'day' as const, periodStart: dayStart }
    const sum = recount.get(key(day)) ?? { ...day, count: 0, amount: 0 }
    sum.count += hour.count
    sum.amount += hour.amount
    recount.set(key(day), sum)
  }

  const [stored] = await trx.rawQuery(
    `SELECT deposit_account_id, period, period_start, order_count, amount
       FROM deposit_usage_counters
      WHERE (period = 'day' AND period_start = ?)
         OR (period = 'hour' AND period_start >= ? AND period_start < ?)`,
    [dayStart, dayStart, dayEnd]
  )
  const counters = new Map<string, CounterFigures>()
  for (const row of stored) {
    const figures: CounterFigures = {
      accountId: Number(row.deposit_account_id),
      period: row.period,
      periodStart: row.period_start,
      count: Number(row.order_count),
      amount: Number(row.amount),
    }
    counters.set(key(figures), figures)
  }

  const drifts: UsageDrift[] = []
  const wrong: CounterFigures[] = []
  for (const id of new Set([...recount.keys(), ...counters.keys()])) {
    const expected = recount.get(id)
    const actual = counters.get(id)
    const base = (expected ?? actual)!
    const want = { count: expected?.count ?? 0, amount: expected?.amount ?? 0 }
    const have = { count: actual?.count ?? 0, amount: actual?.amount ?? 0 }
    if (want.count === have.count && want.amount === have.amount) continue
    const start = DateTime.fromJSDate(base.periodStart).setZone(GATEWAY_ZONE)
    drifts.push({
      kind: 'counter',
      detail:
        `account ${base.accountId} ${base.period} from ${start.toFormat('yyyy-LL-dd HH:mm')}: ` +
        `counter ${have.count} orders / ${have.amount} satang, ` +
        `orders ${want.count} / ${want.amount}`,
    })
    wrong.push({ ...base, ...want })
  }
  return { stored: counters.size, drifts, wrong }
}

/** Slots held by an order but free in deposit_slots, and held ones no order holds. */
async function slotDrifts(trx: TransactionClientContract) {
  const [notHeld] = await trx.rawQuery(
    `SELECT orders.deposit_account_id, orders.slot_amount, orders.platform_order_id
       FROM payment_orders AS orders
       LEFT JOIN deposit_slots AS slots
         ON slots.deposit_account_id = orders.deposit_account_id
        AND slots.slot_amount = orders.slot_amount AND slots.held = 1
      WHERE orders.slot_amount IS NOT NULL AND slots.slot_amount IS NULL`
  )
  const [notReleased] = await trx.rawQuery(
    `SELECT slots.deposit_account_id, slots.slot_amount
       FROM deposit_slots AS slots
       LEFT JOIN payment_orders AS orders
         ON orders.deposit_account_id = slots.deposit_account_id
        AND orders.slot_amount = slots.slot_amount
      WHERE slots.held = 1 AND orders.id IS NULL`
  )
  const [[held]] = await trx.rawQuery('SELECT COUNT(*) AS n FROM deposit_slots WHERE held = 1')
  const drifts: UsageDrift[] = [
    ...notHeld.map((row: Record<string, unknown>) => ({
      kind: 'slot_not_held' as const,
      detail: `account ${row.deposit_account_id} amount ${row.slot_amount} satang: held by order ${row.platform_order_id}, free in deposit_slots`,
    })),
    ...notReleased.map((row: Record<string, unknown>) => ({
      kind: 'slot_not_released' as const,
      detail: `account ${row.deposit_account_id} amount ${row.slot_amount} satang: held in deposit_slots, no open order holds it`,
    })),
  ]
  return { notHeld, notReleased, held: Number(held.n), drifts }
}
