import env from '#start/env'

/**
 * Gateway-wide settings that the merchant API contract leaves to the operator.
 * Every value has a default that is safe for local development; see
 * .env.example and docs/decisions.md for the reasoning behind each default.
 */
const gateway = {
  /** Accepted difference between the request `time` field and the server clock. */
  timeToleranceSeconds: env.get('API_TIME_TOLERANCE_SECONDS', 300),

  /**
   * Largest merchant API request body. /slip/upload carries up to 2,000,000
   * image bytes as base64 (about 2.67 MB), so the limit leaves room for that and
   * for a clear 422 on slightly larger images before the 413 cut-off.
   */
  bodyLimitBytes: env.get('API_BODY_LIMIT_BYTES', 4 * 1024 * 1024),

  /** How long the previous secret (and token) stay valid after a rotation. */
  credentialGraceSeconds: env.get('CREDENTIAL_GRACE_SECONDS', 24 * 60 * 60),

  /**
   * Request rate limits of the merchant API, shared by every web process
   * through Redis (see docs/decisions.md). Generous: they stop floods and
   * runaway clients, not normal traffic.
   */
  rateLimits: {
    /** Requests per second per merchant, unless the merchant has its own (merchant:configure --api-rate-limit). */
    perMerchant: env.get('API_RATE_LIMIT_PER_MERCHANT', 100),
    /** Requests per second per source IP, checked before any database work. */
    perIp: env.get('API_RATE_LIMIT_PER_IP', 200),
    /**
     * Failed authentications per minute from one source IP, and naming one
     * existing merchant_id (by default the same number), before failures
     * from there are answered 429 for 5 minutes. Requests that authenticate
     * are never refused by them.
     */
    authFailuresPerIp: env.get('API_AUTH_FAILURES_PER_IP', 30),
    authFailuresPerMerchant: env.get(
      'API_AUTH_FAILURES_PER_MERCHANT',
      env.get('API_AUTH_FAILURES_PER_IP', 30)
    ),
  },

  /**
   * Per-process cache of what merchant authentication reads (merchant row,
   * credentials, IP whitelist). Changes are announced to every process at
   * once; the lifetime bounds staleness when Redis cannot carry that message.
   * 0 turns the cache off.
   */
  authCache: {
    ttlMs: env.get('AUTH_CACHE_TTL_MS', 1000),
    /** Merchants kept per process; unknown merchant_ids have a smaller share of their own. */
    maxEntries: env.get('AUTH_CACHE_MAX_ENTRIES', 10_000),
  },

  /**
   * Per-process cache of the configuration payment create reads on every
   * request: the platform row and the deposit group's accounts
   * (app/core/process_cache.ts). A change saved in this process is seen at
   * once, in the others within this lifetime. 0 turns the cache off.
   */
  configCacheTtlMs: env.get('CONFIG_CACHE_TTL_MS', 1000),

  /** Peers whose X-Forwarded-For / X-Forwarded-Proto headers are believed. */
  trustedProxies: (env.get('TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean),
}

export default gateway
