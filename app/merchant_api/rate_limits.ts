import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { GatewayError } from '#exceptions/gateway_error'
import { redisUsable } from '#core/redis'

export interface RateLimitSettings {
  /** Requests per second per merchant (a merchant's own api_rate_limit overrides it). */
  perMerchant: number
  /** Requests per second per source IP. */
  perIp: number
  /** Failed authentications per minute per source IP before a 5-minute block. */
  authFailuresPerIp: number
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

/** Limits count over 10-second windows: a burst is fine, a sustained flood is not. */
const WINDOW_SECONDS = 10
const AUTH_FAILURE_WINDOW_SECONDS = 60
const AUTH_FAILURE_BLOCK_SECONDS = 300

/**
 * Request rate limits of the merchant API, counted in Redis so that every web
 * process shares them (rate-limiter-flexible, the library @adonisjs/limiter
 * is built on). While Redis is unreachable each process counts on its own in
 * memory instead: limits stay on, only less exact.
 */
export class MerchantRateLimits {
  #limiters = new Map<string, Limiter>()

  constructor(
    private redis: Redis,
    private settings: RateLimitSettings
  ) {}

  /**
   * Before anything touches the database: floods from one address stop here.
   * Both checks are sent together (one round trip to Redis); a blocked
   * address is named as such even when it also exceeded the request rate.
   */
  async checkIp(ip: string) {
    const outcomes = await Promise.allSettled([
      this.#consume(
        this.#authFailures(),
        ip,
        'this address made too many failed authentication attempts',
        0
      ),
      this.#consume(
        this.#limiter('ip', this.settings.perIp * WINDOW_SECONDS, WINDOW_SECONDS),
        ip,
        `more than ${this.settings.perIp} requests per second from this address`
      ),
    ])
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason
  }

  /**
   * Counts a failed authentication; the one that reaches the limit blocks the
   * address for AUTH_FAILURE_BLOCK_SECONDS.
   */
  async penalizeIp(ip: string) {
    const counter = await this.#counter(this.#authFailures())
    const state = await counter.consume(ip, 1).catch((outcome) => outcome)
    if (state instanceof RateLimiterRes && state.remainingPoints <= 0) {
      await counter.block(ip, AUTH_FAILURE_BLOCK_SECONDS).catch(() => {})
    }
  }

  #authFailures() {
    return this.#limiter(
      'auth-failures',
      this.settings.authFailuresPerIp,
      AUTH_FAILURE_WINDOW_SECONDS
    )
  }

  async checkMerchant(merchantId: string, ownLimit: number | null) {
    const perSecond = ownLimit ?? this.settings.perMerchant
    await this.#consume(
      this.#limiter('merchant', perSecond * WINDOW_SECONDS, WINDOW_SECONDS),
      merchantId,
      `more than ${perSecond} requests per second for this merchant`
    )
  }

  /** Consumes `points` (0: only reads the state); 429 in the envelope when over the limit. */
  async #consume(limiter: Limiter, key: string, reason: string, points = 1) {
    const counter = await this.#counter(limiter)
    try {
      if (points === 0) {
        const state = await counter.get(key)
        if (state && state.remainingPoints <= 0) throw state
        return
      }
      await counter.consume(key, points)
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) return // no store could answer: let it through
      throw new RateLimitedError(reason, Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)))
    }
  }

  /** While Redis is away, count in this process's memory without waiting for it. */
  async #counter(limiter: Limiter): Promise<RateLimiterRedis | RateLimiterMemory> {
    return (await redisUsable(this.redis)) ? limiter : limiter.insurance
  }

  #limiter(name: string, points: number, duration: number) {
    const id = `${name}:${points}:${duration}`
    let limiter = this.#limiters.get(id)
    if (!limiter) {
      // The limit is part of the key: processes with another setting never share a counter.
      const options = {
        keyPrefix: `gw:rl:${name}:${points}:${duration}`,
        points,
        duration,
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
