import env from '#start/env'

/**
 * Redis: the queues (BullMQ), the replay store, rate limits and worker
 * reports. Tests use database 1 so that development data in 0 is untouched.
 */
const redisConfig = {
  host: env.get('REDIS_HOST', '127.0.0.1'),
  port: env.get('REDIS_PORT', 6379),
  password: env.get('REDIS_PASSWORD') || undefined,
  db: env.get('REDIS_DB', env.get('NODE_ENV') === 'test' ? 1 : 0),
}

export default redisConfig
