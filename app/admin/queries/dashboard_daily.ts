import db from '@adonisjs/lucid/services/db'
import {
  ALL_MERCHANTS,
  merchantsIn,
  type DashboardScope,
  type DashboardWindow,
} from '#admin/queries/dashboard_scope'
import { byDay, rate, sum } from '#admin/queries/dashboard_rollups'

/**
 * The dashboard's figures by day: deposits, payouts, time to match and
 * callback deliveries. Each day's figure is one range of an indexed datetime
 * column read from a covering index (database/migrations/…062_dashboard_indexes.ts),
 * through byDay: past days from the rollups, today live.
 */

export interface DayTotals {
  /** Orders created. */
  count: number
  /** Satang of the orders created. */
  amount: number
  /** Orders paid (deposits) or sent (payouts). */
  succeeded: number
  /** Satang of those. */
  succeededAmount: number
  /** Deposits: expired; payouts: failed, rejected or cancelled. */
  failed: number
  /** Orders still open. */
  open: number
}

export interface DailySeries {
  days: DayTotals[]
  today: DayTotals & { successRate: number | null; failureRate: number | null }
  week: DayTotals & { successRate: number | null; failureRate: number | null }
}

function totals(days: DayTotals[]): DayTotals {
  return {
    count: sum(days.map((day) => day.count)),
    amount: sum(days.map((day) => day.amount)),
    succeeded: sum(days.map((day) => day.succeeded)),
    succeededAmount: sum(days.map((day) => day.succeededAmount)),
    failed: sum(days.map((day) => day.failed)),
    open: sum(days.map((day) => day.open)),
  }
}

/**
 * Rates are of the orders that reached an outcome (open orders excluded):
 * an order created a minute ago is neither a success nor a failure yet.
 */
function withRates(day: DayTotals) {
  const decided = day.count - day.open
  return {
    ...day,
    successRate: rate(day.succeeded, decided),
    failureRate: rate(day.failed, decided),
  }
}

function series(days: DayTotals[]): DailySeries {
  return { days, today: withRates(days[days.length - 1]), week: withRates(totals(days)) }
}

function readTotals(row: Record<string, unknown>): DayTotals {
  return {
    count: Number(row.count),
    amount: Number(row.amount),
    succeeded: Number(row.succeeded),
    succeededAmount: Number(row.succeeded_amount),
    failed: Number(row.failed),
    open: Number(row.open),
  }
}

/**
 * Deposits (payment orders) created per day: count, volume, paid, expired.
 * Paid is unsettled_paid or settled_paid; an order frozen or refused is
 * neither paid nor expired.
 */
export async function depositFigures(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<DailySeries> {
  const only = merchantsIn(scope, 'merchant_id')
  const days = await byDay(`deposits${scope.key}`, window, async (from, to) => {
    const [rows] = await db.rawQuery(
      `SELECT COUNT(*) AS count,
              COALESCE(SUM(amount), 0) AS amount,
              COALESCE(SUM(status IN ('unsettled_paid', 'settled_paid')), 0) AS succeeded,
              COALESCE(SUM(IF(status IN ('unsettled_paid', 'settled_paid'), amount, 0)), 0) AS succeeded_amount,
              COALESCE(SUM(status = 'error' AND error_reason = 'expired'), 0) AS failed,
              COALESCE(SUM(status = 'open'), 0) AS open
         FROM payment_orders
        WHERE created_at >= ? AND created_at < ?${only.sql}`,
      [from, to, ...only.bindings]
    )
    return readTotals(rows[0])
  })
  return series(days)
}

/** Payouts (withdrawals and settlements) created per day: count, volume, sent, failed. */
export async function payoutFigures(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<DailySeries> {
  const only = merchantsIn(scope, 'merchant_id')
  const days = await byDay(`payouts${scope.key}`, window, async (from, to) => {
    const [rows] = await db.rawQuery(
      `SELECT COUNT(*) AS count,
              COALESCE(SUM(amount), 0) AS amount,
              COALESCE(SUM(status = 'success'), 0) AS succeeded,
              COALESCE(SUM(IF(status = 'success', amount, 0)), 0) AS succeeded_amount,
              COALESCE(SUM(status IN ('failed', 'error', 'cancelled', 'rejected')), 0) AS failed,
              COALESCE(SUM(status IN ('new', 'queue', 'pending')), 0) AS open
         FROM payout_orders
        WHERE created_at >= ? AND created_at < ?${only.sql}`,
      [from, to, ...only.bindings]
    )
    return readTotals(rows[0])
  })
  return series(days)
}

export interface MatchTimes {
  /** Per day of the match: payments matched, mean seconds from order to match and from bank line to match. */
  days: Array<{ matched: number; orderToMatch: number | null; lineToMatch: number | null }>
  today: { matched: number; orderToMatch: number | null; lineToMatch: number | null }
  week: { matched: number; orderToMatch: number | null; lineToMatch: number | null }
}

/**
 * Time to match: for payments matched by a statement line, the mean time
 * from the order's creation to the match (what the merchant waits) and from
 * the bank's line time to the match (the import delay), by day of the match.
 */
export async function matchTimes(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<MatchTimes> {
  const only = merchantsIn(scope, 'orders.merchant_id')
  const raw = await byDay(`matching${scope.key}`, window, async (from, to) => {
    const [rows] = await db.rawQuery(
      `SELECT COUNT(*) AS matched,
              COALESCE(SUM(TIMESTAMPDIFF(SECOND, orders.created_at, matched_lines.matched_at)), 0) AS order_seconds,
              COALESCE(SUM(TIMESTAMPDIFF(SECOND, matched_lines.line_at, matched_lines.matched_at)), 0) AS line_seconds
         FROM statement_lines AS matched_lines
         JOIN payment_orders AS orders ON orders.id = matched_lines.order_id
        WHERE matched_lines.matched_at >= ? AND matched_lines.matched_at < ?
          AND matched_lines.order_type = 'payment'${only.sql}`,
      [from, to, ...only.bindings]
    )
    return {
      matched: Number(rows[0].matched),
      orderSeconds: Number(rows[0].order_seconds),
      lineSeconds: Number(rows[0].line_seconds),
    }
  })
  const mean = (day: { matched: number; orderSeconds: number; lineSeconds: number }) => ({
    matched: day.matched,
    orderToMatch: day.matched > 0 ? Math.round(day.orderSeconds / day.matched) : null,
    lineToMatch: day.matched > 0 ? Math.round(day.lineSeconds / day.matched) : null,
  })
  return {
    days: raw.map(mean),
    today: mean(raw[raw.length - 1]),
    week: mean({
      matched: sum(raw.map((day) => day.matched)),
      orderSeconds: sum(raw.map((day) => day.orderSeconds)),
      lineSeconds: sum(raw.map((day) => day.lineSeconds)),
    }),
  }
}

export interface CallbackFigures {
  /** Per day: POSTs made and POSTs that did not get HTTP 200 (or no answer). */
  days: Array<{ attempts: number; failedAttempts: number }>
  today: { attempts: number; failedAttempts: number; failureRate: number | null }
  week: { attempts: number; failedAttempts: number; failureRate: number | null }
  /** Callbacks created in the window that were given up on (state failed), and still pending. */
  givenUp: number
  pending: number
}

/**
 * Callback failure rate: delivery attempts (callback_attempts) that did not
 * get HTTP 200, per day; and the callbacks of the week that the gateway gave
 * up on after every retry.
 */
export async function callbackFigures(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<CallbackFigures> {
  const only = merchantsIn(scope, 'outbox.merchant_id')
  // An attempt names its callback, and the callback its merchant: joined only when filtered.
  const attemptsFrom =
    scope.merchantIds === null
      ? 'callback_attempts AS attempts'
      : `callback_attempts AS attempts
           JOIN callback_outbox AS outbox ON outbox.id = attempts.callback_outbox_id`
  const outboxOnly = merchantsIn(scope, 'merchant_id')
  const [days, [states]] = await Promise.all([
    byDay(`callbacks${scope.key}`, window, async (from, to) => {
      const [rows] = await db.rawQuery(
        `SELECT COUNT(*) AS attempts,
                COALESCE(SUM(attempts.http_status IS NULL OR attempts.http_status <> 200), 0) AS failed_attempts
           FROM ${attemptsFrom}
          WHERE attempts.created_at >= ? AND attempts.created_at < ?${only.sql}`,
        [from, to, ...only.bindings]
      )
      return { attempts: Number(rows[0].attempts), failedAttempts: Number(rows[0].failed_attempts) }
    }),
    db.rawQuery(
      `SELECT state, COUNT(*) AS total
         FROM callback_outbox
        WHERE state IN ('failed', 'pending') AND created_at >= ? AND created_at < ?${outboxOnly.sql}
        GROUP BY state`,
      [window.start.toJSDate(), window.now.toJSDate(), ...outboxOnly.bindings]
    ),
  ])
  const withRate = (figures: { attempts: number; failedAttempts: number }) => ({
    ...figures,
    failureRate: rate(figures.failedAttempts, figures.attempts),
  })
  const byState = new Map<string, number>(
    states.map((row: { state: string; total: unknown }) => [row.state, Number(row.total)])
  )
  return {
    days,
    today: withRate(days[days.length - 1]),
    week: withRate({
      attempts: sum(days.map((day) => day.attempts)),
      failedAttempts: sum(days.map((day) => day.failedAttempts)),
    }),
    givenUp: byState.get('failed') ?? 0,
    pending: byState.get('pending') ?? 0,
  }
}
