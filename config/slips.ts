import env from '#start/env'
import app from '@adonisjs/core/services/app'

/**
 * Payment slips: the merchant API's upload limits (the spec's Limits rows,
 * not settings; the payment page's are in config/payments.ts) and the
 * sources that establish a slip's transaction.
 */
const slipsConfig = {
  merchantApi: {
    /** Spec: 2,000,000 bytes after decoding. */
    maxBytes: 2_000_000,
    /** Spec: 1 upload per order per 5 minutes. */
    reuploadSeconds: 5 * 60,
    /** Spec: order at most 30 days old. */
    maxOrderAgeDays: 30,
  },

  /**
   * Where a slip's amount, receiver, time and reference come from, asked in
   * this order until one knows the transaction: `statement` (the deposit
   * account's imported statement lines), `sandbox` (the slip-verification
   * provider's sandbox, which knows the sandbox bank's transfers; never in
   * production), `slipok` and `easyslip` (slip-verification providers,
   * settings below). A source that cannot answer is skipped for the next
   * one (docs/slips.md). Comma-separated.
   */
  verifiers: (env.get('SLIP_VERIFIERS') ?? (app.inProduction ? 'statement' : 'statement,sandbox'))
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),

  /** Pending slips are re-checked by the sweep while they are at most this old. */
  recheckMaxAgeDays: env.get('SLIP_RECHECK_MAX_AGE_DAYS', 30),

  /**
   * The slip-verification providers. Keys stay `Secret`s (printed as
   * [redacted]) until the request's header is written.
   */
  providers: {
    /** One request's limit: connect, TLS and the whole answer. */
    timeoutMs: env.get('SLIP_PROVIDER_TIMEOUT_MS', 8000),
    /** PEM file of certificate(s) trusted in addition to the default roots. */
    caFile: env.get('SLIP_PROVIDER_CA_FILE'),
    slipok: {
      /** The check-slip endpoint without the branch id, which is appended. */
      url: env.get('SLIPOK_URL', 'https://api.slipok.com/api/line/apikey'),
      branchId: env.get('SLIPOK_BRANCH_ID'),
      apiKey: env.get('SLIPOK_API_KEY'),
    },
    easyslip: {
      /** API v2's verify-bank endpoint. */
      url: env.get('EASYSLIP_URL', 'https://api.easyslip.com/v2/verify/bank'),
      apiKey: env.get('EASYSLIP_API_KEY'),
    },
  },
}

export type SlipProvidersConfig = typeof slipsConfig.providers

export default slipsConfig
