import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Redis } from 'ioredis'
import { RedisConnections } from '#services/redis'

export interface DependencyState {
  status: 'up' | 'down'
  latency_ms: number
  error?: string
}

export interface HealthReport {
  healthy: boolean
  status: 'ok' | 'unavailable'
  checks: { mysql: DependencyState; redis: DependencyState }
  time: string
}

const CHECK_TIMEOUT_MS = 2000

@inject()
export class HealthService {
  constructor(private redis: RedisConnections) {}

  async check(redisClient: Redis = this.redis.main): Promise<HealthReport> {
    const [mysql, redis] = await Promise.all([
      probe(() => db.rawQuery('SELECT 1')),
      probe(() => redisClient.ping()),
    ])
    const healthy = mysql.status === 'up' && redis.status === 'up'
    return {
      healthy,
      status: healthy ? 'ok' : 'unavailable',
      checks: { mysql, redis },
      time: new Date().toISOString(),
    }
  }
}

async function probe(operation: () => Promise<unknown>): Promise<DependencyState> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      operation(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
          CHECK_TIMEOUT_MS
        )
      }),
    ])
    return { status: 'up', latency_ms: Math.round(performance.now() - started) }
  } catch (error) {
    return {
      status: 'down',
      latency_ms: Math.round(performance.now() - started),
      // The public answer names the failure, not internal host names or ports.
      error: (error as { code?: string }).code ?? 'no answer',
    }
  } finally {
    clearTimeout(timer)
  }
}
