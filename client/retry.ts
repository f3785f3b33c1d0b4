/**
 * When the client sends a request again. A retry always sends the SAME bytes
 * with the SAME signature (never a new `time`): the gateway answers a request
 * it has seen with its original answer, so a create whose answer was lost is
 * never executed twice, and a retry learns what the first attempt did.
 */

/**
 * Situations that may be retried:
 * - `timeout`: no complete answer within timeoutMs;
 * - `connection-reset`: the connection was reset (ECONNRESET, EPIPE);
 * - `socket-hang-up`: the connection closed without an answer;
 * - `connection-refused`: nothing listens (nothing was sent);
 * - `service-unavailable`: HTTP 503 with a Retry-After header (a dependency
 *   of the gateway briefly away). A 503 without Retry-After (no deposit
 *   channel, data.code killswitch_off or outside_open_period) is not retried;
 * - `too-many-requests`: HTTP 429 too-many-requests with Retry-After (a rate
 *   limit). Off by default: a slip re-upload limit asks for minutes.
 * TLS, DNS and other failures, and every other answer, are never retried.
 */
export type RetryCause =
  | 'timeout'
  | 'connection-reset'
  | 'socket-hang-up'
  | 'connection-refused'
  | 'service-unavailable'
  | 'too-many-requests'

export interface RetryPolicy {
  /** Attempts after the first one (0: never retry). */
  retries: number
  /** What is retried. */
  retryOn: readonly RetryCause[]
  /** First backoff delay; doubles on each retry (when no Retry-After says otherwise). */
  baseDelayMs: number
  /** Upper bound of a backoff delay. */
  maxDelayMs: number
  /** Spread each backoff delay randomly over [delay/2, delay] (many clients retrying at once). */
  jitter: boolean
  /** A Retry-After asking for longer than this is not waited for: the error is thrown. */
  maxRetryAfterMs: number
  /**
   * No retry starts later than this after the request was signed. The
   * gateway accepts `time` within 300 s of its clock (clock skew included),
   * and only a request inside that window can be answered again; keep a
   * margin.
   */
  windowMs: number
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retries: 2,
  retryOn: Object.freeze([
    'timeout',
    'connection-reset',
    'socket-hang-up',
    'connection-refused',
    'service-unavailable',
  ] as RetryCause[]),
  baseDelayMs: 250,
  maxDelayMs: 5000,
  jitter: true,
  maxRetryAfterMs: 30_000,
  windowMs: 120_000,
})

/** `retries: 3` (the default policy, 3 retries), a partial policy, or nothing (the default). */
export function resolveRetryPolicy(option: number | Partial<RetryPolicy> | undefined): RetryPolicy {
  const policy: RetryPolicy =
    typeof option === 'number'
      ? { ...DEFAULT_RETRY_POLICY, retries: option }
      : { ...DEFAULT_RETRY_POLICY, ...option }
  for (const key of [
    'retries',
    'baseDelayMs',
    'maxDelayMs',
    'maxRetryAfterMs',
    'windowMs',
  ] as const) {
    if (!Number.isFinite(policy[key]) || policy[key] < 0) {
      throw new RangeError(`retry policy: ${key} must be a non-negative number`)
    }
  }
  if (!Number.isInteger(policy.retries))
    throw new RangeError('retry policy: retries must be an integer')
  return policy
}

/** The backoff before retry number `retry` (1-based). */
export function backoffDelayMs(policy: RetryPolicy, retry: number, random = Math.random): number {
  const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return policy.jitter ? Math.round(delay / 2 + (random() * delay) / 2) : delay
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(
  header: string | string[] | undefined,
  now = Date.now()
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** What a retry hook is told before the client waits and sends the same bytes again. */
export interface RetryEvent {
  endpoint: string
  /** The attempt that failed (1 = the first send). */
  attempt: number
  cause: RetryCause
  delayMs: number
  /** The X-SIGNATURE sent, and sent again. */
  signature: string
}
