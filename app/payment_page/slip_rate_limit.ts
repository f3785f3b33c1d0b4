import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { redisUsable } from '#core/redis'

const WINDOW_SECONDS = 60

/**
 * Slip upload requests per minute on the hosted payment page, per source IP
 * and open order (or per source IP for requests naming no open order),
 * counted in Redis so that every web process shares one counter (the same
 * library and fallback as the merchant API's limits): while Redis cannot
 * answer, each process counts in its own memory, so the limit stays on.
 */
export class PaymentPageSlipRateLimit {
  #shared: RateLimiterRedis
  #memory: RateLimiterMemory

  constructor(
    private redis: Redis,
    perMinute: number
  ) {
    // The limit is part of the key: processes with another setting never share a counter.
    const options = {
      keyPrefix: `gw:rl:pay-slip-ip:${perMinute}:${WINDOW_SECONDS}`,
      points: perMinute,
      duration: WINDOW_SECONDS,
    }
    this.#memory = new RateLimiterMemory(options)
    this.#shared = new RateLimiterRedis({
      ...options,
      storeClient: redis,
      insuranceLimiter: this.#memory,
    })
  }

  /**
   * Counts one request under `key`. Returns null when it may go on, or the
   * seconds until that key may try again.
   */
  async consume(key: string): Promise<number | null> {
    const counter = (await redisUsable(this.redis)) ? this.#shared : this.#memory
    try {
      await counter.consume(key, 1)
      return null
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) return null // no store could answer: let it through
      return Math.max(1, Math.ceil(outcome.msBeforeNext / 1000))
    }
  }
}
