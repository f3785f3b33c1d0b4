import { isIP } from 'node:net'
import type { Redis } from 'ioredis'
import app from '@adonisjs/core/services/app'
import { RedisConnections, redisUsable } from '#core/redis'
import { unmapIpv4 } from '#merchants/ip_whitelist'
import {
  AUTH_FAILURE_KEY_PREFIX,
  parseAuthFailureKey,
  type AuthFailureKind,
} from '#merchant_api/rate_limits'

/**
 * The merchant API's failed-authentication counters as operators see them:
 * one per source address and per existing merchant_id with a failure in the
 * last minute, or blocked (over its limit: failures counted there are
 * answered 429 for 5 minutes; requests that authenticate are not affected).
 * They live in Redis (rate_limits.ts); each web process's in-memory stand-in
 * for when Redis is away is not seen here.
 */
export interface AuthFailureCounter {
  kind: AuthFailureKind
  /** The source address or the merchant_id. */
  subject: string
  /** Failures counted in the window, or since the window the block started in. */
  failures: number
  /** The limit the counting processes use (part of the key). */
  limit: number
  windowSeconds: number
  /** Over the limit: failures here are answered 429 until the key expires. */
  blocked: boolean
  /** Until the block ends (blocked), or the count starts again from 0. */
  secondsLeft: number
  /** The Redis key. */
  key: string
}

export interface AuthFailureCounters {
  /** Blocked first, then the most failures first. */
  counters: AuthFailureCounter[]
  /** More keys than MAX_COUNTERS: the first ones found are shown. */
  truncated: boolean
}

/** The most counters read at once: a page and a terminal stay readable, Redis is not held up. */
export const MAX_COUNTERS = 5000
const SCAN_COUNT = 1000
const READ_BATCH = 500

/** Redis is needed to read or clear the counters; null: not reachable now. */
export async function authFailureStore(): Promise<Redis | null> {
  const redis = (await app.container.make(RedisConnections)).main
  return (await redisUsable(redis, 2000)) ? redis : null
}

/**
 * Every counter, found with SCAN (never KEYS: it would stop Redis for every
 * client while it walks the whole keyspace). `blockedOnly` leaves out the
 * addresses and merchant_ids still under their limit.
 */
export async function authFailureCounters(
  redis: Redis,
  options: { blockedOnly?: boolean; max?: number } = {}
): Promise<AuthFailureCounters> {
  const max = options.max ?? MAX_COUNTERS
  const keys = new Set<string>()
  let cursor = '0'
  let truncated = false
  do {
    const [next, batch] = await redis.scan(
      cursor,
      'MATCH',
      `${AUTH_FAILURE_KEY_PREFIX}:*`,
      'COUNT',
      SCAN_COUNT
    )
    cursor = next
    for (const key of batch) {
      if (keys.size >= max) {
        truncated = true
        break
      }
      keys.add(key)
    }
  } while (cursor !== '0' && !truncated)

  const counters: AuthFailureCounter[] = []
  const all = [...keys]
  for (let start = 0; start < all.length; start += READ_BATCH) {
    const batch = all.slice(start, start + READ_BATCH)
    const replies =
      (await redis
        .pipeline(batch.flatMap((key) => [['get', key] as const, ['pttl', key] as const]))
        .exec()) ?? []
    batch.forEach((key, index) => {
      const parsed = parseAuthFailureKey(key)
      const [getError, value] = replies[index * 2] ?? []
      const [ttlError, ttl] = replies[index * 2 + 1] ?? []
      // Expired between SCAN and GET, or not a counter: nothing to show.
      if (!parsed || getError || ttlError || value === null || value === undefined) return
      const failures = Number(value)
      const counter: AuthFailureCounter = {
        ...parsed,
        failures,
        blocked: failures > parsed.limit,
        secondsLeft: Math.max(0, Math.ceil(Number(ttl) / 1000)),
        key,
      }
      if (options.blockedOnly && !counter.blocked) return
      counters.push(counter)
    })
  }
  counters.sort(
    (a, b) =>
      Number(b.blocked) - Number(a.blocked) ||
      b.failures - a.failures ||
      a.subject.localeCompare(b.subject)
  )
  return { counters, truncated }
}

const MERCHANT_ID_PATTERN = /^[A-Za-z0-9]{1,32}$/

/**
 * What an operator typed, as the counters name it: an IPv4 or IPv6 address
 * (IPv4-mapped IPv6 becomes IPv4, IPv6 its compressed lowercase form), or a
 * merchant_id (compared byte for byte). Null: neither.
 */
export function parseBlockSubject(text: string): { kind: AuthFailureKind; subject: string } | null {
  const trimmed = text.trim()
  const address = unmapIpv4(trimmed)
  const family = isIP(address)
  if (family === 4) return { kind: 'ip', subject: address }
  if (family === 6)
    return { kind: 'ip', subject: new URL(`http://[${address}]/`).hostname.slice(1, -1) }
  if (MERCHANT_ID_PATTERN.test(trimmed)) return { kind: 'merchant', subject: trimmed }
  return null
}

/** How the kind is named to operators. */
export function kindLabel(kind: AuthFailureKind) {
  return kind === 'ip' ? 'address' : 'merchant_id'
}

/** "4 min 47 s", "12 s". */
export function durationLabel(seconds: number) {
  const minutes = Math.floor(seconds / 60)
  const rest = seconds % 60
  return minutes > 0 ? `${minutes} min ${rest} s` : `${rest} s`
}

/** A counter as the command's JSON and the back-office show it. */
export function presentCounter(counter: AuthFailureCounter) {
  return {
    kind: kindLabel(counter.kind),
    subject: counter.subject,
    failures: counter.failures,
    limit: counter.limit,
    window_seconds: counter.windowSeconds,
    blocked: counter.blocked,
    seconds_left: counter.secondsLeft,
    time_left: durationLabel(counter.secondsLeft),
  }
}
