import env from '#start/env'
import { parseSentinels } from '#core/redis_sentinels'

/**
 * Redis: the queues (BullMQ), rate limits, worker reports and cache
 * invalidations. Tests use database 1 so that development data in 0 is
 * untouched.
 *
 * With REDIS_SENTINELS set the gateway asks those Sentinels for the master
 * named REDIS_MASTER_NAME and follows it through a failover; REDIS_HOST and
 * REDIS_PORT are then ignored, REDIS_PASSWORD and REDIS_DB still apply to the
 * master (and its replicas).
 */
const redisConfig = {
  host: env.get('REDIS_HOST', '127.0.0.1'),
  port: env.get('REDIS_PORT', 6379),
  password: env.get('REDIS_PASSWORD') || undefined,
  db: env.get('REDIS_DB', env.get('NODE_ENV') === 'test' ? 1 : 0),
  sentinels: parseSentinels(env.get('REDIS_SENTINELS')),
  masterName: env.get('REDIS_MASTER_NAME') || 'gw',
  sentinelPassword: env.get('REDIS_SENTINEL_PASSWORD') || undefined,
}

export type RedisConfig = typeof redisConfig

export default redisConfig
