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
   * account's imported statement lines) and `sandbox` (the slip-verification
   * provider's sandbox, which knows the sandbox bank's transfers; never in
   * production). Comma-separated.
   */
  verifiers: (env.get('SLIP_VERIFIERS') ?? (app.inProduction ? 'statement' : 'statement,sandbox'))
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),

  /** Pending slips are re-checked by the sweep while they are at most this old. */
  recheckMaxAgeDays: env.get('SLIP_RECHECK_MAX_AGE_DAYS', 30),
}

export default slipsConfig
