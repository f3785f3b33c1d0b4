import { Redis, type RedisOptions } from 'ioredis'
import redisConfig from '#config/redis'

export function redisOptions(overrides: RedisOptions = {}): RedisOptions {
  return {
    ...redisConfig,
    lazyConnect: true,
    // Reconnect at most half a second after Redis is back (ioredis waits up to
    // 2 s, BullMQ up to 20 s): requests that need Redis and the workers'
    // schedule check resume at once. A connect attempt every 0.5 s per
    // connection during an outage costs nothing.
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
    ...overrides,
  }
}

/**
 * How long a command on a request's path may wait for Redis. Past it the
 * caller goes on without Redis or answers 503: a request never hangs on a
 * Redis that is down or stuck.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1000

/**
 * Whether a command can be sent now. A connection that was lost is not waited
 * for; one still making its first connect (a process just started) is given
 * up to `waitMs`.
 */
export async function redisUsable(connection: Redis, waitMs = REDIS_COMMAND_TIMEOUT_MS) {
  if (connection.status === 'ready') return true
  if (!['wait', 'connecting', 'connect'].includes(connection.status)) return false
  return new Promise<boolean>((resolve) => {
    const settle = (usable: boolean) => {
      clearTimeout(timer)
      connection.off('ready', onReady)
      connection.off('close', onClose)
      resolve(usable)
    }
    const onReady = () => settle(true)
    const onClose = () => settle(false)
    const timer = setTimeout(() => settle(false), waitMs)
    connection.once('ready', onReady)
    connection.once('close', onClose)
  })
}

/**
 * The process's Redis connections. `main` serves commands issued by the web
 * and worker code (rate limits, worker status, cache invalidations); BullMQ gets its
 * own connections because blocking commands must not share a socket.
 */
export class RedisConnections {
  #main?: Redis
  #subscriber?: Redis

  get main(): Redis {
    if (!this.#main) {
      this.#main = new Redis(
        redisOptions({
          // Connect as soon as the connection is first wanted; callers on a
          // request's path check isRedisReady() and never wait for a reconnect.
          lazyConnect: false,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: true,
          connectTimeout: 2000,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          // The commands concurrent requests send in one tick (rate limits)
          // leave in one write: a socket write costs more here
          // than the command.
          enableAutoPipelining: true,
        })
      )
      // Errors surface on the command that failed; the connection-level event
      // would otherwise crash the process as an unhandled 'error'.
      this.#main.on('error', () => {})
    }
    return this.#main
  }

  /**
   * A connection in subscriber mode (it can run no other command): the
   * merchant authentication changes. Subscriptions are re-made by their owner
   * on 'ready', so that it knows when messages flow again.
   */
  get subscriber(): Redis {
    if (!this.#subscriber) {
      this.#subscriber = new Redis(redisOptions({ lazyConnect: false, autoResubscribe: false }))
      this.#subscriber.on('error', () => {})
    }
    return this.#subscriber
  }

  async closeAll() {
    // Nothing to flush on a subscriber: closed at once, even with Redis away.
    this.#subscriber?.disconnect()
    this.#subscriber = undefined
    if (this.#main) {
      const connection = this.#main
      this.#main = undefined
      await connection.quit().catch(() => connection.disconnect())
    }
  }
}

/**
 * Publishes `message` on `channel` with the process's main connection; a
 * process that has not connected yet (a CLI command) is given its first
 * connect. Best effort: with Redis away nothing is sent, and the listeners'
 * caches are bounded by their own lifetimes.
 */
export async function publishChange(
  connections: RedisConnections,
  channel: string,
  message: string
) {
  try {
    const redis = connections.main
    if (await redisUsable(redis)) await redis.publish(channel, message)
  } catch {}
}

/**
 * Follows `channel` on the process's subscriber connection: `onMessage` for
 * each message, `onSubscribed` each time Redis confirms the subscription
 * (first and after every reconnect: messages sent while the connection was
 * down are lost, so a listener drops everything it caches then). The
 * subscription is re-made by hand after a reconnect.
 */
export function followChannel(
  connections: RedisConnections,
  channel: string,
  onMessage: (message: string) => void,
  onSubscribed: () => void
) {
  const subscriber = connections.subscriber
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) onMessage(message)
  })
  const subscribe = () => {
    subscriber
      .subscribe(channel)
      .then(onSubscribed)
      .catch(() => {})
  }
  subscriber.on('ready', subscribe)
  if (subscriber.status === 'ready') subscribe()
}
