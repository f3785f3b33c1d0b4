import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { GATEWAY_ZONE } from '#core/clock'
import { REDIS_COMMAND_TIMEOUT_MS, redisUsable } from '#core/redis'
import { queue, queueConnection } from '#core/queue/queue_manager'
import { QUEUE_NAMES, type QueueName } from '#jobs/jobs'
import { periodUsage } from '#payments/deposit_pool'
import { AGE_BUCKETS } from '#review/queues'
import Platform from '#merchants/models/platform'
import Merchant from '#merchants/models/merchant'
import { openReceivablesSummary, type ReceivablesSummary } from '#admin/queries/reconciliation_page'

/**
 * The figures of the back-office dashboard, one function per figure. Each
 * day's figure is one range of an indexed datetime column read from a
 * covering index (database/migrations/…062_dashboard_indexes.ts): today's is
 * always read live; a past day's is kept in dashboard_daily_rollups once
 * computed and read again from the orders when it may have changed (see
 * byDay). The cost follows the orders of a day, never the size of the tables
 * (docs/benchmarks.md).
 */

const DAYS = 7

/** The dashboard's selects (GET ?platform=&merchant=); null: every one. */
export interface DashboardFilter {
  platformId: number | null
  merchantId: number | null
}

export const NO_FILTER: DashboardFilter = { platformId: null, merchantId: null }

/**
 * The merchants a filter covers (null: all, [] : none, e.g. a merchant of
 * another platform), and the suffix of the figures' rollup keys, so that
 * each filter keeps its own stored days.
 */
export interface DashboardScope {
  merchantIds: number[] | null
  key: string
}

export const ALL_MERCHANTS: DashboardScope = { merchantIds: null, key: '' }

/** A select's value when it names one of `ids`; anything else means "all". */
function chosenId(value: unknown, ids: number[]): number | null {
  const id = typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) ? Number(value) : null
  return id !== null && ids.includes(id) ? id : null
}

/**
 * The platforms and merchants the dashboard's selects offer, and the ones
 * chosen (?platform=, ?merchant=). The merchant select lists the chosen
 * platform's merchants only; a merchant of another platform (a stale URL)
 * is dropped rather than showing nothing.
 */
export async function dashboardChoices(platform: unknown, merchant: unknown) {
  const platforms = await Platform.query().orderBy('name').orderBy('id')
  const platformId = chosenId(
    platform,
    platforms.map((item) => item.id)
  )
  const merchantsQuery = Merchant.query().orderBy('name').orderBy('id')
  if (platformId !== null) merchantsQuery.where('platform_id', platformId)
  const merchants = await merchantsQuery
  const merchantId = chosenId(
    merchant,
    merchants.map((item) => item.id)
  )
  return {
    platforms: platforms.map((item) => ({ id: item.id, name: item.name })),
    merchants: merchants.map((item) => ({
      id: item.id,
      name: item.name,
      platformId: item.platformId,
    })),
    platformId,
    merchantId,
  }
}

/**
 * Orders carry their merchant, not their platform: a platform is the list
 * of its merchants (a few per platform), which each query then reads as
 * `merchant_id IN (…)` from the merchant-first indexes.
 */
export async function dashboardScope(filter: DashboardFilter): Promise<DashboardScope> {
  if (filter.merchantId === null && filter.platformId === null) return ALL_MERCHANTS
  const query = db.from('merchants').select('id').orderBy('id')
  if (filter.merchantId !== null) query.where('id', filter.merchantId)
  if (filter.platformId !== null) query.where('platform_id', filter.platformId)
  const rows = await query
  return {
    merchantIds: rows.map((row) => Number(row.id)),
    key: `:p${filter.platformId ?? ''}:m${filter.merchantId ?? ''}`,
  }
}

/** `AND <column> IN (…)` for a scope, with its bindings; nothing for every merchant. */
function merchantsIn(scope: DashboardScope, column: string) {
  if (scope.merchantIds === null) return { sql: '', bindings: [] as number[] }
  if (scope.merchantIds.length === 0) return { sql: ' AND 1 = 0', bindings: [] as number[] }
  return {
    sql: ` AND ${column} IN (${scope.merchantIds.map(() => '?').join(', ')})`,
    bindings: scope.merchantIds,
  }
}

/** Today and the 6 days before it, as Bangkok calendar days. */
export interface DashboardWindow {
  now: DateTime
  /** Bangkok midnight of the first day, in UTC. */
  start: DateTime
  /** Bangkok midnight of today, in UTC. */
  todayStart: DateTime
  /** The days, oldest first, as yyyy-LL-dd in Bangkok. */
  days: string[]
}

export function dashboardWindow(now: DateTime = DateTime.utc()): DashboardWindow {
  const today = now.setZone(GATEWAY_ZONE).startOf('day')
  const first = today.minus({ days: DAYS - 1 })
  return {
    now: now.toUTC(),
    start: first.toUTC(),
    todayStart: today.toUTC(),
    days: Array.from({ length: DAYS }, (_, index) =>
      first.plus({ days: index }).toFormat('yyyy-LL-dd')
    ),
  }
}

/** A past day's stored figures are read again from the orders this long after the day ended… */
const SETTLE_MINUTES = 30
/** …and then once they are this old (an operator's late decision, a late payment). */
const REFRESH_MINUTES = 60

/**
 * One figure for each day of the window, computed by `compute(from, to)`
 * over [from, to). Today's is computed now. A past day's comes from
 * dashboard_daily_rollups, computed and stored when missing, and read again
 * when it was stored less than SETTLE_MINUTES after the day ended (orders of
 * 23:55 expire after midnight) or more than REFRESH_MINUTES ago. Of the
 * stored days due, one per call is read again (the newest), so a view costs
 * about two days of orders whatever the table's size; a past day's change
 * shows within REFRESH_MINUTES and the views it takes to reach that day
 * (yesterday: the next view). Today's figures are always live.
 */
async function byDay<T>(
  figure: string,
  window: DashboardWindow,
  compute: (from: Date, to: Date) => Promise<T>
): Promise<T[]> {
  const pastDays = window.days.slice(0, -1)
  const rows = await db
    .from('dashboard_daily_rollups')
    .where('figure', figure)
    .whereIn('day', pastDays)
    .select('day', 'figures', 'computed_at')
  const stored = new Map(rows.map((row) => [row.day as string, row]))
  const bounds = pastDays.map((_, index) => {
    const from = window.start.plus({ days: index })
    return { from, to: from.plus({ days: 1 }) }
  })
  const isFresh = (index: number) => {
    const computedAt = DateTime.fromJSDate(stored.get(pastDays[index])!.computed_at)
    return (
      computedAt >= bounds[index].to.plus({ minutes: SETTLE_MINUTES }) &&
      computedAt >= window.now.minus({ minutes: REFRESH_MINUTES })
    )
  }
  // Missing days are computed; of the stored days due, only the newest (the
  // likeliest to have changed) is read again in this call.
  const due = pastDays.map((day, index) => !stored.has(day) || !isFresh(index))
  const refresh = due.lastIndexOf(true)
  const values: T[] = []
  for (const [index, day] of pastDays.entries()) {
    const row = stored.get(day)
    if (row && index !== refresh) {
      values.push(typeof row.figures === 'string' ? JSON.parse(row.figures) : row.figures)
      continue
    }
    const value = await compute(bounds[index].from.toJSDate(), bounds[index].to.toJSDate())
    await db.rawQuery(
      `INSERT INTO dashboard_daily_rollups (figure, day, figures, computed_at) VALUES (?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE figures = VALUES(figures), computed_at = VALUES(computed_at)`,
      [figure, day, JSON.stringify(value), window.now.toJSDate()]
    )
    values.push(value)
  }
  values.push(await compute(window.todayStart.toJSDate(), window.now.toJSDate()))
  return values
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

/** `part / whole` as a fraction, or null when there is nothing to divide. */
export function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null
}

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

export interface AccountUsage {
  id: number
  channel: string
  label: string
  group: string
  hour: { count: number; countLimit: number | null; amount: number; amountLimit: number | null }
  day: { count: number; countLimit: number | null; amount: number; amountLimit: number | null }
  /** The fullest of the account's limits, as a fraction (null: no limit). */
  fullest: number | null
}

/**
 * Per-channel usage against limits: every active deposit account with its
 * orders and THB of the current Bangkok hour and day beside its limits
 * (the same figures the pool selection checks), grouped by channel.
 */
export async function channelUsage(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<AccountUsage[]> {
  const query = db.from('deposit_accounts').where('active', true)
  // Filtered: the accounts serving the merchants' deposit groups. Their usage
  // stays the account's whole usage, since the limits are the account's.
  if (scope.merchantIds !== null) {
    query.whereIn(
      'deposit_group',
      db.from('merchants').whereIn('id', scope.merchantIds).select('deposit_group')
    )
  }
  const accounts = await query.orderBy('channel').orderBy('deposit_group').orderBy('id').select('*')
  const usage = await periodUsage(db.connection(), accounts, window.now)
  return accounts.map((account) => {
    const used = usage.get(account.id) ?? { hourCount: 0, hourAmount: 0, dayCount: 0, dayAmount: 0 }
    const limit = (value: unknown) => (value === null ? null : Number(value))
    const hour = {
      count: used.hourCount,
      countLimit: limit(account.hourly_count_limit),
      amount: used.hourAmount,
      amountLimit: limit(account.hourly_amount_limit),
    }
    const day = {
      count: used.dayCount,
      countLimit: limit(account.daily_count_limit),
      amount: used.dayAmount,
      amountLimit: limit(account.daily_amount_limit),
    }
    const fractions = [
      [hour.count, hour.countLimit],
      [hour.amount, hour.amountLimit],
      [day.count, day.countLimit],
      [day.amount, day.amountLimit],
    ]
      .filter(([, max]) => max !== null)
      .map(([value, max]) => (max! > 0 ? value! / max! : 1))
    return {
      id: Number(account.id),
      channel: account.channel,
      label: `${account.bank} ${account.account_no}`,
      group: account.deposit_group,
      hour,
      day,
      fullest: fractions.length > 0 ? Math.max(...fractions) : null,
    }
  })
}

export interface QueueDepth {
  name: QueueName
  waiting: number
  active: number
  delayed: number
  failed: number
}

/**
 * Jobs per BullMQ queue. Null when Redis cannot answer within about a
 * second: the dashboard shows the panel as unavailable and the rest of the
 * page as usual.
 */
export async function queueDepths(): Promise<QueueDepth[] | null> {
  try {
    if (!(await redisUsable(queueConnection()))) return null
    let timer: NodeJS.Timeout | undefined
    const counting = Promise.all(
      QUEUE_NAMES.map(async (name) => {
        const counts = await queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed')
        return {
          name,
          waiting: counts.waiting ?? 0,
          active: counts.active ?? 0,
          delayed: counts.delayed ?? 0,
          failed: counts.failed ?? 0,
        }
      })
    )
    counting.catch(() => {}) // may still fail after the timeout; nobody waits for it then
    try {
      return await Promise.race([
        counting,
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), REDIS_COMMAND_TIMEOUT_MS)
        }),
      ])
    } finally {
      clearTimeout(timer)
    }
  } catch {
    return null
  }
}

export interface ReviewAges {
  /** The bucket labels of AGE_BUCKETS. */
  buckets: string[]
  queues: Array<{
    queue: 'frozen' | 'slips' | 'lines' | 'approvals'
    label: string
    counts: number[]
    total: number
    /** Counted for every merchant even when the page is filtered (not tied to one merchant). */
    allMerchants: boolean
  }>
}

/**
 * Open review items by age (AGE_BUCKETS): frozen payments (since their last
 * change, the freeze), undecided slips of orders awaiting review (since the
 * upload), unmatched and late statement lines (since the import) and
 * pending approval requests (since the request). Each is one indexed range
 * of open items, bucketed in SQL.
 */
export async function reviewAges(
  window: DashboardWindow,
  scope: DashboardScope = ALL_MERCHANTS
): Promise<ReviewAges> {
  const frozenOnly = merchantsIn(scope, 'merchant_id')
  // The slip's own merchant_id (its order's): filtering on the order's would
  // read every order awaiting review instead of only their index.
  const slipsOnly = merchantsIn(scope, 'slips.merchant_id')
  const bounds = AGE_BUCKETS.filter((bucket) => Number.isFinite(bucket.hours)).map((bucket) =>
    window.now.minus({ hours: bucket.hours }).toJSDate()
  )
  // age < 1 h ⇔ at > now - 1 h: the first bucket whose bound the item is newer than.
  const bucketOf = (column: string) =>
    `CASE ${bounds.map((_, index) => `WHEN ${column} > ? THEN ${index}`).join(' ')} ELSE ${bounds.length} END`
  const grouped = (sql: string, column: string, bindings: unknown[] = []) =>
    db.rawQuery(`SELECT ${bucketOf(column)} AS bucket, COUNT(*) AS total ${sql} GROUP BY bucket`, [
      ...bounds,
      ...bindings,
    ])
  const results = await Promise.all([
    grouped(
      `FROM payment_orders WHERE status = 'freeze'${frozenOnly.sql}`,
      'updated_at',
      frozenOnly.bindings
    ),
    grouped(
      // From the (few) orders awaiting review to their slips: most slips are
      // undecided because they never needed a decision.
      `FROM payment_orders AS orders
       STRAIGHT_JOIN payment_slips AS slips ON slips.payment_order_id = orders.id
      WHERE orders.awaiting_review = 1 AND slips.review_decision IS NULL${slipsOnly.sql}`,
      'slips.created_at',
      slipsOnly.bindings
    ),
    grouped(`FROM statement_lines WHERE status IN ('unmatched', 'late')`, 'created_at'),
    grouped(`FROM approval_requests WHERE status = 'pending'`, 'created_at'),
  ])
  const labels = {
    frozen: 'Frozen payments',
    slips: 'Flagged slips',
    lines: 'Unmatched and late lines',
    approvals: 'Approval requests',
  } as const
  const names = ['frozen', 'slips', 'lines', 'approvals'] as const
  return {
    buckets: AGE_BUCKETS.map((bucket) => bucket.label),
    queues: names.map((name, index) => {
      const counts = AGE_BUCKETS.map(() => 0)
      for (const row of results[index][0]) counts[Number(row.bucket)] = Number(row.total)
      // Unmatched bank lines have no merchant yet; approval requests name a
      // target of any kind (platform, merchant, order), not a merchant.
      const allMerchants = scope.merchantIds !== null && (name === 'lines' || name === 'approvals')
      return { queue: name, label: labels[name], counts, total: sum(counts), allMerchants }
    }),
  }
}

export interface DashboardData {
  window: { days: string[]; today: string; generatedAt: string }
  deposits: DailySeries
  payouts: DailySeries
  matching: MatchTimes
  callbacks: CallbackFigures
  usage: AccountUsage[]
  queues: QueueDepth[] | null
  review: ReviewAges
  /** Payments credited before their bank line (open receivables), now. */
  receivables: ReceivablesSummary
  /** Whether a platform or merchant filter narrowed the figures. */
  filtered: boolean
}

/** Every figure of the dashboard, the queries run side by side. */
export async function dashboardData(
  now: DateTime = DateTime.utc(),
  filter: DashboardFilter = NO_FILTER
): Promise<DashboardData> {
  const window = dashboardWindow(now)
  const scope = await dashboardScope(filter)
  const [deposits, payouts, matching, callbacks, usage, queues, review, receivables] =
    await Promise.all([
      depositFigures(window, scope),
      payoutFigures(window, scope),
      matchTimes(window, scope),
      callbackFigures(window, scope),
      channelUsage(window, scope),
      queueDepths(),
      reviewAges(window, scope),
      openReceivablesSummary({ now: window.now.toJSDate(), merchantIds: scope.merchantIds }),
    ])
  return {
    window: {
      days: window.days,
      today: window.days[window.days.length - 1],
      generatedAt: window.now.setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd HH:mm:ss'),
    },
    deposits,
    payouts,
    matching,
    callbacks,
    usage,
    queues,
    review,
    receivables,
    filtered: scope.merchantIds !== null,
  }
}
