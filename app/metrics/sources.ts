import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import metricsConfig from '#config/metrics'
import { gatewayPeriodStarts } from '#core/clock'
import { RedisConnections } from '#core/redis'
import { redisRole as roleOf } from '#core/health'
import { QUEUE_NAMES } from '#jobs/jobs'
import { queue } from '#core/queue/queue_manager'
import { listWorkerStatuses } from '#core/queue/worker_status'
import { staleReceivableCount } from '#reconciliation/receivable_window'
import { unsealedRowCount } from '#core/audit_chain'
import { readStatementSourceFigures } from '#reconciliation/fetch/source_metrics'
import {
  auditChainOk,
  auditChainProblems,
  auditChainUnsealed,
  auditChainVerifyAge,
  breakGlassUses,
  sensitiveRequestOldest,
  sensitiveRequestsPending,
  callbackOldestPending,
  callbackOutbox,
  dbPoolConnections,
  dbPoolPendingAcquires,
  dbReadOnly,
  dbTopology,
  dependencyUp,
  depositAccountsActive,
  depositAccountUsage,
  galeraClusterSize,
  galeraLocalState,
  galeraNodeSynced,
  ledgerVerifyAge,
  ledgerVerifyDrifts,
  ledgerVerifyOk,
  queueJobs,
  queueWorkers,
  redisRole,
  reviewQueueItems,
  reviewQueueOldest,
  sourceFailures,
  sourceLastSuccess,
  verifyAge,
  verifyOk,
  verifyProblems,
  workerSchedulesMissing,
} from './registry.js'

/**
 * Figures a scrape reads from MariaDB and Redis, each group cached for a few
 * seconds: however often Prometheus (or several of them) scrapes, a group is
 * read at most once per period, one read at a time. A scrape waits for a
 * stale group at most `scrapeWaitMs`, then answers with the last figures it
 * has; a dependency that is down or hung shows as gateway_dependency_up 0 and
 * an old gateway_metrics_source_last_success_timestamp_seconds, never as a
 * failed or hanging scrape.
 */
class CachedSource {
  #readAt = 0
  #reading?: Promise<void>

  constructor(
    readonly name: string,
    readonly ttlMs: number,
    readonly read: () => Promise<void>
  ) {}

  forget() {
    this.#readAt = 0
  }

  /** Resolves when fresh figures are in, or after `waitMs` with the old ones. */
  refresh(waitMs: number): Promise<void> {
    if (Date.now() - this.#readAt < this.ttlMs) return Promise.resolve()
    this.#reading ??= this.read()
      .then(() => {
        this.#readAt = Date.now()
        sourceLastSuccess.labels(this.name).set(this.#readAt / 1000)
      })
      .catch(() => {
        // Read again at the next scrape past the period, not at every scrape.
        this.#readAt = Date.now()
        sourceFailures.labels(this.name).inc()
      })
      .finally(() => (this.#reading = undefined))
    let timer: NodeJS.Timeout | undefined
    return Promise.race([
      this.#reading,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]).finally(() => clearTimeout(timer))
  }
}

/** A promise that rejects after `ms`: a read never waits longer on a dependency. */
function within<T>(ms: number, operation: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    operation,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

const READ_TIMEOUT_MS = 2_000

// -- Redis: queue depths, the connection's role, the workers --------------------------

const JOB_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'failed',
  'completed',
] as const

async function redisMain() {
  return (await app.container.make(RedisConnections)).main
}

/** On failure the depths stay as last read; gateway_dependency_up says whether Redis is. */
async function readQueues() {
  const counts = await within(
    READ_TIMEOUT_MS,
    Promise.all(QUEUE_NAMES.map((name) => queue(name).getJobCounts(...JOB_STATES)))
  )
  QUEUE_NAMES.forEach((name, index) => {
    for (const state of JOB_STATES) queueJobs.labels(name, state).set(counts[index][state] ?? 0)
  })
}

async function readRedis() {
  const redis = await redisMain()
  try {
    await within(READ_TIMEOUT_MS, redis.ping())
    dependencyUp.labels('redis').set(1)
  } catch (error) {
    dependencyUp.labels('redis').set(0)
    throw error
  }
  // The same reading as for operators (app/core/health.ts): a replica means a
  // failover the connection has not followed.
  const { role } = await roleOf(redis)
  for (const known of ['master', 'replica', 'unknown']) redisRole.labels(known).set(0)
  redisRole.labels(role).set(1)
}

/** The workers' own reports (as /health lists them): a SCAN, so read less often. */
async function readWorkers() {
  const workers = await within(READ_TIMEOUT_MS, listWorkerStatuses(await redisMain()))
  for (const name of QUEUE_NAMES) {
    queueWorkers.labels(name).set(workers.filter((worker) => worker.queues.includes(name)).length)
  }
  workerSchedulesMissing.set(workers.filter((worker) => worker.schedules !== 'ok').length)
}

// -- MariaDB: pools, topology, review queues, limits, verify --------------------------

/** Read at every scrape: the pools are in this process's memory. */
export function readPools() {
  for (const [name, entry] of db.manager.connections) {
    const pool = entry.connection?.pool
    if (!pool) continue
    dbPoolConnections.labels(name, 'used').set(pool.numUsed())
    dbPoolConnections.labels(name, 'free').set(pool.numFree())
    // tarn keeps its maximum protected; the pool config is the same figure.
    dbPoolConnections.labels(name, 'max').set((pool as unknown as { max: number }).max)
    dbPoolPendingAcquires.labels(name).set(pool.numPendingAcquires())
  }
}

const rowsOf = (result: unknown) => (result as [Array<Record<string, any>>])[0]
const ageSeconds = (at: unknown, now: number) =>
  at ? Math.max(0, (now - new Date(at as string).getTime()) / 1000) : 0

async function readTopology() {
  const status = rowsOf(
    await db.rawQuery(
      `SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size')`
    )
  )
  const value = (name: string) =>
    status.find((row) => String(row.Variable_name).toLowerCase() === name)?.Value
  const state = value('wsrep_local_state_comment')
  const size = value('wsrep_cluster_size')
  // A MariaDB without the wsrep provider has no wsrep_* status (or an empty comment).
  const galera = Boolean(state) && Number(size) > 0
  dbTopology.labels('galera').set(galera ? 1 : 0)
  dbTopology.labels('standalone').set(galera ? 0 : 1)
  galeraLocalState.reset()
  if (galera) {
    galeraClusterSize.set(Number(size))
    galeraNodeSynced.set(state === 'Synced' ? 1 : 0)
    galeraLocalState.labels(String(state)).set(1)
  } else {
    galeraClusterSize.reset()
    galeraNodeSynced.reset()
  }
  const [readOnly] = rowsOf(await db.rawQuery('SELECT @@global.read_only AS read_only'))
  dbReadOnly.set(Number(readOnly?.read_only ?? 0) ? 1 : 0)
}

/**
 * Each review queue's size and the age of its oldest item, by the same rules
 * as the back-office's queues (app/review), on their indexes.
 */
async function readReviewQueues(now: number) {
  const results = await Promise.all([
    db.rawQuery(
      `SELECT COUNT(*) AS total,
              MIN(COALESCE((SELECT MAX(e.created_at) FROM order_events e
                             WHERE e.order_type = 'payment' AND e.order_id = o.id
                               AND e.to_status = 'freeze'
                               AND (e.from_status IS NULL OR e.from_status <> 'freeze')),
                           o.updated_at)) AS oldest
         FROM payment_orders o WHERE o.status = 'freeze'`
    ),
    db.rawQuery(
      `SELECT COUNT(*) AS total, MIN(created_at) AS oldest
         FROM payment_slips WHERE review_decision IS NULL`
    ),
    db.rawQuery(
      `SELECT COUNT(*) AS total, MIN(created_at) AS oldest
         FROM approval_requests WHERE status = 'pending'`
    ),
    // The lines queue's waitingLines() (app/admin/queries/lines_queue.ts): credits left
    // unmatched or late, debits no transfer confirms.
    db.rawQuery(
      `SELECT COUNT(*) AS total, MIN(l.created_at) AS oldest FROM statement_lines l
        WHERE l.decision IS NULL AND l.status IN ('unmatched', 'late')
          AND ((l.direction = 'credit')
               OR (l.direction = 'debit' AND l.status = 'unmatched' AND NOT EXISTS
                     (SELECT 1 FROM payout_confirmations p WHERE p.statement_line_id = l.id)))`
    ),
    db.rawQuery(
      `SELECT state, COUNT(*) AS total, MIN(created_at) AS oldest
         FROM callback_outbox WHERE state IN ('pending', 'failed') GROUP BY state`
    ),
  ])
  const [[frozen], [slips], [approvals], [lines], callbacks] = results.map(rowsOf)
  const receivables = await staleReceivableCount()
  const byState = new Map(callbacks.map((row) => [row.state, row]))

  const set = (name: string, total: unknown, oldest: unknown) => {
    reviewQueueItems.labels(name).set(Number(total ?? 0))
    reviewQueueOldest.labels(name).set(ageSeconds(oldest, now))
  }
  set('frozen', frozen.total, frozen.oldest)
  set('slips', slips.total, slips.oldest)
  set('approvals', approvals.total, approvals.oldest)
  set('lines', lines.total, lines.oldest)
  set('callbacks', byState.get('failed')?.total, byState.get('failed')?.oldest)
  reviewQueueItems.labels('receivables').set(Number(receivables))

  callbackOutbox.labels('pending').set(Number(byState.get('pending')?.total ?? 0))
  callbackOutbox.labels('failed').set(Number(byState.get('failed')?.total ?? 0))
  callbackOldestPending.set(ageSeconds(byState.get('pending')?.oldest, now))

  // Four eyes on where money goes (app/notifications): the break-glass uses, and the sensitive requests waiting.
  const [[glass], [sensitive]] = (
    await Promise.all([
      db.rawQuery(`SELECT COUNT(*) AS total FROM notifications WHERE kind = 'break_glass'`),
      db.rawQuery(
        `SELECT COUNT(*) AS total, MIN(r.created_at) AS oldest
           FROM approval_requests r
           JOIN notifications n ON n.approval_request_id = r.id AND n.kind = 'request'
          WHERE r.status = 'pending'`
      ),
    ])
  ).map(rowsOf)
  breakGlassUses.set(Number(glass.total ?? 0))
  sensitiveRequestsPending.set(Number(sensitive.total ?? 0))
  sensitiveRequestOldest.set(ageSeconds(sensitive.oldest, now))
}

/** Current Bangkok hour and day use of each active account against the limits it has. */
async function readDepositAccounts() {
  const { hourStart, dayStart } = gatewayPeriodStarts(DateTime.utc())
  const rows = rowsOf(
    await db.rawQuery(
      `SELECT a.id, a.deposit_group, a.channel,
              a.hourly_count_limit, a.hourly_amount_limit, a.daily_count_limit, a.daily_amount_limit,
              c.period, c.order_count, c.amount
         FROM deposit_accounts a
         LEFT JOIN deposit_usage_counters c
           ON c.deposit_account_id = a.id
          AND ((c.period = 'hour' AND c.period_start = ?) OR (c.period = 'day' AND c.period_start = ?))
        WHERE a.active = 1`,
      [hourStart, dayStart]
    )
  )
  depositAccountUsage.reset()
  depositAccountsActive.reset()
  const seen = new Set<number>()
  const ratio = (used: unknown, limit: unknown) => Number(used ?? 0) / Number(limit)
  for (const row of rows) {
    const labels = { account: String(row.id), group: row.deposit_group, channel: row.channel }
    if (!seen.has(row.id)) {
      seen.add(row.id)
      depositAccountsActive.labels(row.deposit_group, row.channel).inc()
      // Zero until a counter row says otherwise: an account with limits and no order yet.
      for (const [period, count, amount] of [
        ['hour', row.hourly_count_limit, row.hourly_amount_limit],
        ['day', row.daily_count_limit, row.daily_amount_limit],
      ]) {
        if (count !== null) depositAccountUsage.set({ ...labels, period, measure: 'count' }, 0)
        if (amount !== null) depositAccountUsage.set({ ...labels, period, measure: 'amount' }, 0)
      }
    }
    if (!row.period) continue
    const countLimit = row.period === 'hour' ? row.hourly_count_limit : row.daily_count_limit
    const amountLimit = row.period === 'hour' ? row.hourly_amount_limit : row.daily_amount_limit
    if (countLimit !== null && Number(countLimit) > 0) {
      depositAccountUsage.set(
        { ...labels, period: row.period, measure: 'count' },
        ratio(row.order_count, countLimit)
      )
    }
    if (amountLimit !== null && Number(amountLimit) > 0) {
      depositAccountUsage.set(
        { ...labels, period: row.period, measure: 'amount' },
        ratio(row.amount, amountLimit)
      )
    }
  }
}

/**
 * The last recorded run of each whole-database check (the worker's daily run
 * or the command's): reconcile:verify (the ledger against the bank) and
 * ledger:verify (the ledger against itself).
 */
async function readVerify(now: number) {
  const checks = [
    {
      table: 'reconciliation_runs',
      found: 'problems',
      gauges: [verifyOk, verifyProblems, verifyAge],
    },
    {
      table: 'ledger_verify_runs',
      found: 'drifts',
      gauges: [ledgerVerifyOk, ledgerVerifyDrifts, ledgerVerifyAge],
    },
    {
      table: 'audit_verify_runs',
      found: 'problems',
      gauges: [auditChainOk, auditChainProblems, auditChainVerifyAge],
    },
  ] as const
  for (const { table, found, gauges } of checks) {
    const [ok, count, age] = gauges
    const [last] = rowsOf(
      await db.rawQuery(
        `SELECT ${found} AS found, created_at FROM ${table} ORDER BY id DESC LIMIT 1`
      )
    )
    if (!last) {
      ok.set(-1)
      count.reset()
      age.reset()
      continue
    }
    // A run is green exactly when it found nothing.
    ok.set(Number(last.found) === 0 ? 1 : 0)
    count.set(Number(last.found))
    age.set(ageSeconds(last.created_at, now))
  }
  // The sealer, between two verifications: rows it has left behind for 10 minutes.
  auditChainUnsealed.set(await unsealedRowCount(new Date(now)))
}

async function readDatabase() {
  try {
    await within(READ_TIMEOUT_MS, db.rawQuery('SELECT 1'))
    dependencyUp.labels('mysql').set(1)
  } catch (error) {
    dependencyUp.labels('mysql').set(0)
    throw error
  }
  const now = Date.now()
  await within(
    READ_TIMEOUT_MS * 2,
    Promise.all([
      readTopology(),
      readReviewQueues(now),
      readDepositAccounts(),
      readVerify(now),
      readStatementSourceFigures(new Date(now)),
    ])
  )
}

const sources = [
  new CachedSource('queues', metricsConfig.queueCacheMs, readQueues),
  new CachedSource('redis', metricsConfig.queueCacheMs, readRedis),
  new CachedSource('workers', metricsConfig.databaseCacheMs, readWorkers),
  new CachedSource('database', metricsConfig.databaseCacheMs, readDatabase),
]

/**
 * Brings the cached figures up to date before a scrape, waiting at most
 * `waitMs` for them; never rejects.
 */
export async function refreshSources(waitMs = metricsConfig.scrapeWaitMs) {
  readPools()
  await Promise.all(sources.map((source) => source.refresh(waitMs)))
}

/** Makes the next scrape read every group again (tests, after changing the data). */
export function forgetCachedSources() {
  for (const source of sources) source.forget()
}
