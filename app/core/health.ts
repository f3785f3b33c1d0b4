import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Redis } from 'ioredis'
import { RedisConnections } from '#core/redis'
import { queueNames } from '#core/queue/registry'
import { missingSchedules } from '#core/queue/schedules'
import { listWorkerStatuses, type WorkerStatus } from '#core/queue/worker_status'

export interface DependencyState {
  status: 'up' | 'down'
  latency_ms: number
  error?: string
}

export interface HealthReport {
  /** MySQL and Redis answer: this process can serve requests. */
  healthy: boolean
  /** `degraded`: serving, but background work is not running as it should. */
  status: 'ok' | 'degraded' | 'unavailable'
  checks: { mysql: DependencyState; redis: DependencyState }
  /** The repeatable jobs (sweeps, callback dispatch, settlement) Redis should hold. */
  schedules: { status: 'ok' | 'missing' | 'unknown'; missing: string[] }
  /** Workers that reported in the last few schedule checks. */
  workers: WorkerStatus[]
  time: string
}

const CHECK_TIMEOUT_MS = 2000

export interface RedisRole {
  /** What the server says it is (ROLE): a gateway should only ever see 'master'. */
  role: 'master' | 'replica' | 'unknown'
  /** host:port the connection is open to (the master Sentinel named), null when not connected. */
  address: string | null
}

/**
 * The role and address of the Redis server behind `connection`: after a
 * failover, the promoted replica's address. For metrics and operators, not
 * for /health (public: it names no hosts). 'unknown' when Redis does not
 * answer within the check timeout.
 */
export async function redisRole(connection: Redis): Promise<RedisRole> {
  const socket = connection.stream
  const address =
    connection.status === 'ready' && socket?.remoteAddress
      ? `${socket.remoteAddress}:${socket.remotePort}`
      : null
  try {
    const reply = (await withTimeout(connection.role())) as unknown[]
    const role = reply[0] === 'master' ? 'master' : reply[0] === 'slave' ? 'replica' : 'unknown'
    return { role, address }
  } catch {
    return { role: 'unknown', address }
  }
}

@inject()
export class HealthService {
  constructor(private redis: RedisConnections) {}

  async check(redisClient: Redis = this.redis.main): Promise<HealthReport> {
    const [mysql, redis] = await Promise.all([
      probe(() => db.rawQuery('SELECT 1')),
      probe(() => redisClient.ping()),
    ])
    const healthy = mysql.status === 'up' && redis.status === 'up'

    let schedules: HealthReport['schedules'] = { status: 'unknown', missing: [] }
    let workers: WorkerStatus[] = []
    if (redis.status === 'up') {
      const missing = await withTimeout(missingSchedules(queueNames())).catch(() => null)
      if (missing) schedules = { status: missing.length ? 'missing' : 'ok', missing }
      workers = (await withTimeout(listWorkerStatuses(redisClient)).catch(() => null)) ?? []
    }
    const degraded =
      schedules.status !== 'ok' ||
      workers.length === 0 ||
      workers.some((worker) => worker.schedules !== 'ok')

    return {
      healthy,
      status: !healthy ? 'unavailable' : degraded ? 'degraded' : 'ok',
      checks: { mysql, redis },
      schedules,
      workers,
      time: new Date().toISOString(),
    }
  }
}

function withTimeout<T>(operation: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    operation,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
        CHECK_TIMEOUT_MS
      )
    }),
  ]).finally(() => clearTimeout(timer))
}

async function probe(operation: () => Promise<unknown>): Promise<DependencyState> {
  const started = performance.now()
  try {
    await withTimeout(operation())
    return { status: 'up', latency_ms: Math.round(performance.now() - started) }
  } catch (error) {
    return {
      status: 'down',
      latency_ms: Math.round(performance.now() - started),
      // The public answer names the failure, not internal host names or ports.
      error: (error as { code?: string }).code ?? 'no answer',
    }
  }
}
