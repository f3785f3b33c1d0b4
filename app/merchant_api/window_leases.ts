import type { Redis } from 'ioredis'

/**
 * A request rate limit counted in Redis, so that every web process shares
 * it: `points` requests per fixed window of `duration` seconds per key,
 * counted under `<keyPrefix>:<key>` (rate-limiter-flexible's key and value:
 * the points handed out, the key's TTL what is left of the window).
 *
 * A process takes points from the window a few at a time (a lease) and
 * spends them without asking Redis again: a merchant or an address sending
 * hundreds of requests a second costs one Redis round trip per lease, not
 * one per request (docs/decisions.md, "Request rate limits in leases").
 * - A lease is as large as the requests waiting for it, or as the points
 *   this process spent in the window so far, whichever is more, and never
 *   more than a hundredth of the window's points (at most 100). A limit of
 *   fewer than 200 points a window is therefore counted point by point, and
 *   a lease left unspent when a window ends (traffic moved to another
 *   process) keeps at most 1 % of the window from other processes.
 * - One lease at a time per key and process: requests arriving meanwhile
 *   wait for it, and are counted in the next one's size.
 * - Once Redis says the window is spent, the process refuses that key
 *   without asking again until the window ends: no point comes back within
 *   a fixed window.
 */
export class WindowLeases {
  #windows = new Map<string, Window>()
  #nextSweepAt = 0

  constructor(
    private redis: Redis,
    private options: { keyPrefix: string; points: number; duration: number },
    /** The process's clock (ms); a test moves its own. */
    private now: () => number = Date.now
  ) {
    defineLeaseCommand(redis)
  }

  /**
   * Spends one point of `key`'s window: null when it had one, else the
   * milliseconds until the window ends. Throws when Redis does not answer.
   */
  async consume(key: string): Promise<number | null> {
    let window: Window | undefined
    for (;;) {
      const now = this.now()
      if (!window || window.endsAt <= now) {
        // Another request may have opened the next window while this one waited.
        const current = this.#windows.get(key)
        window = current && current.endsAt > now ? current : this.#open(key)
      }
      if (window.left > 0) {
        window.left--
        window.spent++
        return null
      }
      if (window.refused) return window.endsAt - now
      if (window.pending) {
        window.waiting++
        try {
          await window.pending
        } finally {
          window.waiting--
        }
        continue
      }
      const leased = window
      leased.pending = this.#lease(key, leased).finally(() => (leased.pending = undefined))
      await leased.pending
    }
  }

  /** A hundredth of the window's points, at least 1 and at most 100. */
  get #largestLease() {
    return Math.max(1, Math.min(100, Math.floor(this.options.points / 100)))
  }

  async #lease(key: string, window: Window) {
    const wanted = Math.min(this.#largestLease, Math.max(1 + window.waiting, window.spent))
    const sentAt = this.now()
    const [count, ttl] = await (this.redis as LeaseCommand).gwLeasePoints(
      `${this.options.keyPrefix}:${key}`,
      wanted,
      this.options.duration * 1000
    )
    // The window ends no later than Redis says, counted from before it said it.
    window.endsAt = sentAt + Math.max(0, Number(ttl))
    const granted = Math.max(0, Math.min(wanted, this.options.points - (Number(count) - wanted)))
    window.left += granted
    if (granted < wanted) window.refused = true
  }

  #open(key: string) {
    // At most once a window's length: with SWEEP_AT keys still live, a
    // sweep on every new key would read the whole map on the request path.
    if (this.#windows.size >= SWEEP_AT && this.now() >= this.#nextSweepAt) {
      this.#nextSweepAt = this.now() + this.options.duration * 1000
      this.#sweep()
    }
    const window: Window = { endsAt: Infinity, left: 0, spent: 0, waiting: 0, refused: false }
    // Past the bound (a flood from many addresses), windows are not kept:
    // each request then leases its one point, as if counted point by point.
    if (this.#windows.size < MAX_WINDOWS) this.#windows.set(key, window)
    return window
  }

  /** Drops the windows that ended. */
  #sweep() {
    const now = this.now()
    for (const [key, window] of this.#windows) {
      // Infinity: no lease ever answered (Redis failed); the next request starts again.
      if ((window.endsAt <= now || window.endsAt === Infinity) && !window.pending) {
        this.#windows.delete(key)
      }
    }
  }
}

interface Window {
  /** When the window ends (ms, this process's clock); Infinity until Redis has said. */
  endsAt: number
  /** Points leased and not spent yet. */
  left: number
  /** Points this process spent in the window. */
  spent: number
  /** Requests waiting for the lease in flight. */
  waiting: number
  /** Redis handed out the window's last point: refused until it ends. */
  refused: boolean
  pending?: Promise<void>
}

/** Windows kept before the ended ones are dropped, and at most. */
const SWEEP_AT = 10_000
const MAX_WINDOWS = 100_000

type LeaseCommand = Redis & {
  gwLeasePoints(key: string, points: number, windowMs: number): Promise<[number, number]>
}

/**
 * Adds the lease's points to the window's count, starting the window when
 * the key is new; answers the count and the milliseconds the window has left.
 * One script, so that the count and its window are set together.
 */
const LEASE_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}
`

function defineLeaseCommand(redis: Redis) {
  if ('gwLeasePoints' in redis) return
  redis.defineCommand('gwLeasePoints', { numberOfKeys: 1, lua: LEASE_SCRIPT })
}
