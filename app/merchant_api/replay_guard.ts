import type { Redis } from 'ioredis'
import { redisUsable } from '#core/redis'

/**
 * How a merchant endpoint is protected against replayed requests:
 * - `required`: refused with 503 when the replay store cannot answer, because
 *   nothing else stops the same bytes from moving money twice (withdrawals);
 * - `best-effort`: goes on without the store, because the database already
 *   refuses a second order with the same merchant_order_id (payment creates,
 *   settlements);
 * - `off`: reads, which change nothing.
 */
export type ReplayProtection = 'required' | 'best-effort' | 'off'

export class ReplayStoreUnavailableError extends Error {}

/**
 * The replay store: a signature accepted once is refused for twice the
 * `time` tolerance, the longest a captured request stays fresh (sent at
 * time − tolerance, replayed at time + tolerance). Redis SET NX makes the
 * first claim win across every web process.
 */
export class ReplayGuard {
  constructor(
    private redis: Redis,
    private timeToleranceSeconds: number
  ) {}

  /** True when this is the first time the signature is seen; false for a replay. */
  async claim(merchantId: string, signature: string): Promise<boolean> {
    if (!(await redisUsable(this.redis))) {
      throw new ReplayStoreUnavailableError('Redis is not connected')
    }
    try {
      const result = await this.redis.set(
        `gw:replay:${merchantId}:${signature}`,
        '1',
        'EX',
        this.timeToleranceSeconds * 2,
        'NX'
      )
      return result === 'OK'
    } catch (error) {
      throw new ReplayStoreUnavailableError((error as Error).message)
    }
  }
}
