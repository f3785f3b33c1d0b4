import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { GatewayError } from '#exceptions/gateway_error'
import { redisUsable } from '#core/redis'
import { unmapIpv4 } from '#merchants/ip_whitelist'
import { WindowLeases } from '#merchant_api/window_leases'

export interface RateLimitSettings {
  /** Requests per second per merchant (a merchant's own api_rate_limit overrides it). */
  perMerchant: number
  /** Requests per second per source IP. */
  perIp: number
  /** Failed authentications per minute per source IP before a 5-minute block. */
  authFailuresPerIp: number
  /** Failed authentications per minute naming one existing merchant_id before a 5-minute block. */
  authFailuresPerMerchant: number
}

/** 429 `too-many-requests`; the middleware adds the Retry-After header. */
export class RateLimitedError extends GatewayError {
  constructor(
    reason: string,
    public retryAfterSeconds: number
  ) {
    super(429, 'too-many-requests', `rate limit: ${reason}; retry after ${retryAfterSeconds} s`)
  }
}

/** A Redis limiter and its in-memory stand-in for when Redis cannot answer. */
type Limiter = RateLimiterRedis & { insurance: RateLimiterMemory }

/** A request limit: leases of its Redis window, and the in-memory stand-in. */
interface RequestLimiter {
  leases: WindowLeases
  insurance: RateLimiterMemory
}

/** Limits count over 10-second windows: a burst is fine, a sustained flood is not. */
const WINDOW_SECONDS = 10
export const AUTH_FAILURE_WINDOW_SECONDS = 60
export const AUTH_FAILURE_BLOCK_SECONDS = 300

/**
 * Failed authentications are counted under
 * `gw:rl:auth-failures:<kind>:<limit>:<window seconds>:<address or merchant_id>`
 * (rate-limiter-flexible's `<keyPrefix>:<key>`); the value is the number of
 * failures, the key's TTL what is left of the window or of the block.
 */
export const AUTH_FAILURE_KEY_PREFIX = 'gw:rl:auth-failures'
export type AuthFailureKind = 'ip' | 'merchant'

const AUTH_FAILURE_KEY = /^gw:rl:auth-failures:(ip|merchant):(\d+):(\d+):(.+)$/

/** What an auth-failure counter's Redis key says; null: not such a key. */
export function parseAuthFailureKey(key: string) {
  const match = AUTH_FAILURE_KEY.exec(key)
  if (!match) return null
  return {
    kind: match[1] as AuthFailureKind,
    limit: Number(match[2]),
    windowSeconds: Number(match[3]),
    subject: match[4],
  }
}

/** Who a failed authentication is counted against, as the middleware establishes it. */
export interface AuthFailure {
  /** The source address. */
  ip: string
  /** The merchant_id the request named, when it names an existing merchant; else null. */
  merchantId: string | null
  /**
   * The refusal proves the caller sent the merchant's valid token (it came
   * after the token check: signature-required, signature-error,
   * ip-not-whitelisted). Only then may the merchant_id's counter change the
   * answer: for anyone else a 429 from it would tell that the merchant_id
   * exists, which the one identity message keeps secret.
   * (`authentication-failed` covers both identity failures and a stale
   * `time`, so it is never taken as proof.)
   */
  holdsToken: boolean
  /** The refusal authentication gave (403), named in the 429's message. */
  error: GatewayError
}

/**
 * Request rate limits of the merchant API, counted in Redis so that every web
 * process shares them: requests per address and per merchant in leases of
 * their windows (window_leases.ts), failed authentications one by one
 * (rate-limiter-flexible, the library @adonisjs/limiter is built on). While
 * Redis is unreachable each process counts on its own in memory instead:
 * limits stay on, only less exact.
 *
 * Failed authentications are counted per source address and per existing
 * merchant_id, but they never refuse a request that authenticates: a request
 * is judged by them only once it has failed (see authenticationFailed).
 */
export class MerchantRateLimits {
  #limiters = new Map<string, Limiter>()
  #requestLimiters = new Map<string, RequestLimiter>()

  constructor(
    private redis: Redis,
    private settings: RateLimitSettings
  ) {}

  /** Before anything touches the database: floods from one address stop here. */
  async checkIp(ip: string) {
    await this.#consume(
      this.#requestLimiter('ip', this.settings.perIp),
      ip,
      `more than ${this.settings.perIp} requests per second from this address`
    )
  }

  /**
   * Counts a failed authentication against its address and, when it named
   * an existing merchant, that merchant_id (both in one round trip). The
   * failure past a limit starts a block of AUTH_FAILURE_BLOCK_SECONDS, during
   * which every failure counted there is answered 429 instead of its 403.
   * Returns that 429, or null: answer the failure's own 403.
   *
   * Only failures are judged: a request that authenticates never comes here,
   * so nothing that others send from its address or in its merchant_id's
   * name can refuse it.
   */
  async authenticationFailed(failure: AuthFailure): Promise<RateLimitedError | null> {
    const counts = [
      this.#countFailure(
        this.#authFailures('ip', this.settings.authFailuresPerIp),
        unmapIpv4(failure.ip)
      ).then((wait) => (wait ? { wait, from: 'from this address' } : null)),
    ]
    if (failure.merchantId !== null) {
      const merchant = this.#countFailure(
        this.#authFailures('merchant', this.settings.authFailuresPerMerchant),
        failure.merchantId
      )
      if (failure.holdsToken) {
        counts.push(merchant.then((wait) => (wait ? { wait, from: 'on this merchant_id' } : null)))
      } else {
        // Counted (operators see it), but it never changes this answer.
        counts.push(merchant.then(() => null))
      }
    }
    const over = (await Promise.all(counts)).filter((entry) => entry !== null)
    if (over.length === 0) return null
    const { error } = failure
    return new RateLimitedError(
      `too many failed authentication attempts ${over.map((entry) => entry.from).join(' and ')}, and this request failed too (${error.identifier}: ${error.message})`,
      Math.max(...over.map((entry) => entry.wait))
    )
  }

  /** Counts one failure; the seconds left when the key is over its limit, else 0. */
  async #countFailure(limiter: Limiter, key: string) {
    const counter = await this.#counter(limiter)
    try {
      await counter.consume(key, 1)
      return 0
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) return 0 // no store could answer: the 403 stands
      return Math.max(1, Math.ceil(outcome.msBeforeNext / 1000))
    }
  }

  #authFailures(kind: AuthFailureKind, perMinute: number) {
    return this.#limiter(
      `auth-failures:${kind}`,
      perMinute,
      AUTH_FAILURE_WINDOW_SECONDS,
      AUTH_FAILURE_BLOCK_SECONDS
    )
  }

  async checkMerchant(merchantId: string, ownLimit: number | null) {
    const perSecond = ownLimit ?? this.settings.perMerchant
    await this.#consume(
      this.#requestLimiter('merchant', perSecond),
      merchantId,
      `more than ${perSecond} requests per second for this merchant`
    )
  }

  /**
   * Spends a point of the key's window, from this process's lease
   * (window_leases.ts), or from its own memory while Redis cannot answer;
   * 429 in the envelope when the window is spent.
   */
  async #consume(limiter: RequestLimiter, key: string, reason: string) {
    let msBeforeNext: number | null
    try {
      msBeforeNext = (await redisUsable(this.redis))
        ? await limiter.leases.consume(key)
        : await this.#fromMemory(limiter.insurance, key)
    } catch {
      msBeforeNext = await this.#fromMemory(limiter.insurance, key)
    }
    if (msBeforeNext !== null) {
      throw new RateLimitedError(reason, Math.max(1, Math.ceil(msBeforeNext / 1000)))
    }
  }

  /** The same count in this process's memory: null when allowed, else ms until the window ends. */
  async #fromMemory(memory: RateLimiterMemory, key: string) {
    try {
      await memory.consume(key, 1)
      return null
    } catch (outcome) {
      return outcome instanceof RateLimiterRes ? outcome.msBeforeNext : null
    }
  }

  /** A request limit of `perSecond`, counted over WINDOW_SECONDS windows. */
  #requestLimiter(name: 'ip' | 'merchant', perSecond: number): RequestLimiter {
    const points = perSecond * WINDOW_SECONDS
    const id = `${name}:${points}`
    let limiter = this.#requestLimiters.get(id)
    if (!limiter) {
      // The limit is part of the key: processes with another setting never share a counter.
      const options = {
        keyPrefix: `gw:rl:${name}:${points}:${WINDOW_SECONDS}`,
        points,
        duration: WINDOW_SECONDS,
      }
      limiter = {
        leases: new WindowLeases(this.redis, options),
        insurance: new RateLimiterMemory(options),
      }
      this.#requestLimiters.set(id, limiter)
    }
    return limiter
  }

  /** While Redis is away, count in this process's memory without waiting for it. */
  async #counter(limiter: Limiter): Promise<RateLimiterRedis | RateLimiterMemory> {
    return (await redisUsable(this.redis)) ? limiter : limiter.insurance
  }

  /**
   * A failure counter. `blockDuration`: the first point past the limit
   * blocks the key for that long (seconds); the count goes on, and is what
   * operators see.
   */
  #limiter(name: string, points: number, duration: number, blockDuration: number) {
    const id = `${name}:${points}:${duration}:${blockDuration}`
    let limiter = this.#limiters.get(id)
    if (!limiter) {
      // The limit is part of the key: processes with another setting never share a counter.
      const options = {
        keyPrefix: `gw:rl:${name}:${points}:${duration}`,
        points,
        duration,
        blockDuration,
      }
      const insurance = new RateLimiterMemory(options)
      limiter = Object.assign(
        new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: insurance }),
        { insurance }
      )
      this.#limiters.set(id, limiter)
    }
    return limiter
  }
}
