import env from '#start/env'

/** Settlement of paid deposits into balance (unsettled_paid → settled_paid). */
const paymentsConfig = {
  /** A paid deposit settles this many minutes after its payment time... */
  settlementDelayMinutes: env.get('SETTLEMENT_DELAY_MINUTES', 30),
  /** ...or, when set (HH:mm, Bangkok time), once a day: everything paid at or before the cut-off. */
  settlementCutoff: env.get('SETTLEMENT_CUTOFF'),

  /**
   * Slips customers upload on the hosted payment page (POST /pay/:uuid/slip).
   * The merchant API's /slip/upload has its own limits (spec); these apply
   * to the page only.
   */
  paymentPageSlips: {
    /** Largest image accepted ("about 8 MB"): bigger phone photos are refused before they are read whole. */
    maxBytes: env.get('PAYMENT_PAGE_SLIP_MAX_BYTES', 8 * 1024 * 1024),
    /** Seconds between two accepted uploads for one order. */
    cooldownSeconds: env.get('PAYMENT_PAGE_SLIP_COOLDOWN_SECONDS', 60),
    /** Accepted uploads per order. */
    maxPerOrder: env.get('PAYMENT_PAGE_SLIPS_PER_ORDER', 5),
    /** Orders older than this many days take no more slips. */
    maxOrderAgeDays: env.get('PAYMENT_PAGE_SLIP_MAX_ORDER_AGE_DAYS', 30),
    /** Upload requests per minute per source IP, counted in Redis across web processes. */
    perIpPerMinute: env.get('PAYMENT_PAGE_SLIP_REQUESTS_PER_IP_PER_MINUTE', 10),
  },
}

export default paymentsConfig
