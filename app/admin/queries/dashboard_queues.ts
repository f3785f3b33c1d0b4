import db from '@adonisjs/lucid/services/db'
import { REDIS_COMMAND_TIMEOUT_MS, redisUsable } from '#core/redis'
import { queue, queueConnection } from '#core/queue/queue_manager'
import { QUEUE_NAMES, type QueueName } from '#jobs/jobs'
import { periodUsage } from '#payments/deposit_pool'
import { AGE_BUCKETS } from '#review/queues'
import {
  ALL_MERCHANTS,
  merchantsIn,
  type DashboardScope,
  type DashboardWindow,
} from '#admin/queries/dashboard_scope'
import { sum } from '#admin/queries/dashboard_rollups'

/**
 * The dashboard's figures of the moment, never stored: deposit accounts'
 * usage against their limits, jobs per queue, and open review items by age.
 */

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
