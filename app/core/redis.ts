import { Redis, type RedisOptions } from 'ioredis'
import redisConfig, { type RedisConfig } from '#config/redis'

/**
 * The options of every Redis connection of the gateway: to the one server of
 * REDIS_HOST/REDIS_PORT, or, with REDIS_SENTINELS set, to whichever server the
 * Sentinels name master of REDIS_MASTER_NAME. `target` is for tests that
 * connect to another Redis than the configured one.
 */
export function redisOptions(
  overrides: RedisOptions = {},
  target: RedisConfig = redisConfig
): RedisOptions {
  const where: RedisOptions = target.sentinels
    ? {
        sentinels: target.sentinels,
        name: target.masterName,
        sentinelPassword: target.sentinelPassword,
        role: 'master',
        // ioredis's own failoverDetector is left off: a +switch-master that
        // arrives while a reconnect is asking a Sentinel ends that connection
        // for good ('end', "Connection is closed."). followFailovers() below
        // does its work without the race.
        failoverDetector: false,
        // Every Sentinel unreachable: ask them again every half second (the
        // connection stays 'connecting'; callers on a request's path do not wait).
        sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, 500),
        sentinelCommandTimeout: 1000,
        // A master demoted under an open connection refuses writes with
        // READONLY: reconnect through the Sentinels and send the refused
        // command again to the master they name now.
        reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
      }
    : { host: target.host, port: target.port }
  return {
    ...where,
    password: target.password,
    db: target.db,
    lazyConnect: true,
    // Reconnect at most half a second after Redis is back (ioredis waits up to
    // 2 s, BullMQ up to 20 s): requests that need Redis and the workers'
    // schedule check resume at once. A connect attempt every 0.5 s per
    // connection during an outage costs nothing. Through Sentinel, each
    // attempt asks the Sentinels for the master again: a promotion is
    // followed within half a second of the Sentinels announcing it.
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
    ...overrides,
  }
}

/**
 * Every ioredis connection of the gateway is made here (direct or through
 * Sentinel, as configured). Connection-level errors repeat on every
 * reconnect attempt while Redis is away; they surface on the commands that
 * fail, and the 'error' event would otherwise crash the process.
 */
export function createRedis(
  overrides: RedisOptions = {},
  target: RedisConfig = redisConfig
): Redis {
  return connectionOf(redisOptions(overrides, target), target)
}

function connectionOf(options: RedisOptions, target: RedisConfig): Redis {
  const connection = new Redis(options)
  connection.on('error', () => {})
  if (target.sentinels) {
    // BullMQ duplicates a worker's connection for its blocking reads: the
    // duplicates follow failovers too.
    connection.duplicate = (more: Partial<RedisOptions> = {}) =>
      connectionOf({ ...options, ...more }, target)
    followFailovers(connection, target)
  }
  return connection
}

/**
 * Sentinel-mode connections of this process, and one subscription per
 * Sentinel to +switch-master. A promotion drops every connection still open
 * to the old master (one that hangs, paused or cut off, would otherwise wait
 * for its command timeouts, and BullMQ's blocking reads for ever); their
 * reconnect asks the Sentinels for the new one. Only 'ready' connections are
 * dropped: one in the middle of a reconnect already asks the Sentinels.
 */
const followed = new Map<string, { connections: Set<Redis>; watchers: Redis[] }>()

function followFailovers(connection: Redis, target: RedisConfig) {
  const key = `${target.masterName}@${target.sentinels!.map((s) => `${s.host}:${s.port}`).join(',')}`
  let entry = followed.get(key)
  if (!entry) {
    const connections = new Set<Redis>()
    const watchers = target.sentinels!.map((sentinel) => {
      const watcher = new Redis({
        host: sentinel.host,
        port: sentinel.port,
        password: target.sentinelPassword,
        retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
        maxRetriesPerRequest: null,
      })
      watcher.on('error', () => {})
      watcher.subscribe('+switch-master').catch(() => {})
      watcher.on('message', (_channel: string, message: string) => {
        // "<master name> <old ip> <old port> <new ip> <new port>"
        const [name, , , host, port] = message.split(' ')
        if (name !== target.masterName) return
        for (const open of connections) {
          const socket = open.stream
          const atNewMaster = socket?.remoteAddress === host && String(socket?.remotePort) === port
          if (open.status === 'ready' && !atNewMaster) open.disconnect(true)
        }
      })
      return watcher
    })
    entry = { connections, watchers }
    followed.set(key, entry)
  }
  const { connections } = entry
  connections.add(connection)
  connection.once('end', () => {
    connections.delete(connection)
    // The last connection closed (a CLI command, a test, shutdown): so are the watchers.
    if (connections.size === 0 && followed.get(key) === entry) {
      followed.delete(key)
      for (const watcher of entry!.watchers) watcher.disconnect()
    }
  })
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
      this.#main = createRedis({
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
      this.#subscriber = createRedis({ lazyConnect: false, autoResubscribe: false })
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
