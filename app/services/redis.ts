import { Redis, type RedisOptions } from 'ioredis'
import env from '#start/env'

export function redisOptions(overrides: RedisOptions = {}): RedisOptions {
  return {
    host: env.get('REDIS_HOST', '127.0.0.1'),
    port: env.get('REDIS_PORT', 6379),
    password: env.get('REDIS_PASSWORD') || undefined,
    db: env.get('REDIS_DB', process.env.NODE_ENV === 'test' ? 1 : 0),
    lazyConnect: true,
    ...overrides,
  }
}

/**
 * The process's Redis connections. `main` serves commands issued by the web
 * and worker code (rate limits, slot reservations, caches); BullMQ gets its own
 * connections because blocking commands must not share a socket.
 */
export class RedisConnections {
  #main?: Redis

  get main(): Redis {
    if (!this.#main) {
      this.#main = new Redis(
        redisOptions({
          // Fail fast instead of queueing commands forever while Redis is down.
          maxRetriesPerRequest: 1,
          enableOfflineQueue: true,
          connectTimeout: 2000,
        })
      )
      // Errors surface on the command that failed; the connection-level event
      // would otherwise crash the process as an unhandled 'error'.
      this.#main.on('error', () => {})
    }
    return this.#main
  }

  async closeAll() {
    if (this.#main) {
      const connection = this.#main
      this.#main = undefined
      await connection.quit().catch(() => connection.disconnect())
    }
  }
}
