import app from '@adonisjs/core/services/app'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import redisConfig from '#config/redis'
import { RedisConnections, followChannel, publishChange } from '#core/redis'

/**
 * Values read from the database, kept in this process for at most `ttlMs`
 * (a function, so that configuration changes and tests take effect): the
 * configuration the merchant API reads on every request (a platform's
 * killswitch and open period, a deposit group's accounts), which changes
 * rarely. A change saved through the models is dropped at once, here and,
 * through Redis, in every other process (configChanged, called by their save
 * hooks); a change that bypasses the models is seen within `ttlMs`.
 * Concurrent readers of one key share one read; a failed read is not kept.
 * 0 turns the cache off.
 */
export class ProcessCache<K, V> {
  #entries = new Map<K, { value: Promise<V>; expiresAt: number }>()

  constructor(
    private ttlMs: () => number,
    private maxEntries = 1000
  ) {
    caches.add(this as ProcessCache<unknown, unknown>)
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    const ttl = this.ttlMs()
    if (ttl <= 0) return load()
    const now = Date.now()
    const entry = this.#entries.get(key)
    if (entry && entry.expiresAt > now) return entry.value
    const value = load()
    this.#entries.delete(key)
    this.#entries.set(key, { value, expiresAt: now + ttl })
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key)
    })
    // Oldest first out: a Map iterates in insertion order.
    if (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as K)
    }
    return value
  }

  /** Drops one key, or everything. A read under way still answers its own callers. */
  forget(key?: K) {
    if (key === undefined) this.#entries.clear()
    else this.#entries.delete(key)
  }
}

/** Every ProcessCache of this process, for a change announced by another process. */
const caches = new Set<ProcessCache<unknown, unknown>>()

/** Pub/sub channels are server-wide, not per database: the database number keeps test runs apart. */
const CONFIG_CHANNEL = `gateway:config-changed:${redisConfig.db}`

/**
 * Announces that configuration a ProcessCache holds changed: `forget` runs in
 * this process now and again once `trx` commits (between the two a reader
 * could cache the rows as they were), and every other process drops all its
 * cached configuration when the commit's message reaches it through Redis.
 * Without Redis, their copies still expire within their lifetime.
 */
export function configChanged(trx: TransactionClientContract | undefined, forget: () => void) {
  forget()
  if (trx && !trx.isCompleted) {
    trx.after('commit', () => {
      forget()
      return publish()
    })
  } else {
    return publish()
  }
}

async function publish() {
  // Redis away: the other processes' copies expire within CONFIG_CACHE_TTL_MS.
  await publishChange(await app.container.make(RedisConnections), CONFIG_CHANNEL, '*')
}

let subscribed = false

/** Subscribes this process to the changes announced by the others (once). */
export function listenForConfigChanges(connections: RedisConnections) {
  if (subscribed) return
  subscribed = true
  const forgetAll = () => {
    for (const cache of caches) cache.forget()
  }
  followChannel(connections, CONFIG_CHANNEL, forgetAll, forgetAll)
}
