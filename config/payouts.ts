import env from '#start/env'

/** Withdrawals and THB settlements. */
const payoutsConfig = {
  /** After this, an open withdrawal or settlement returns its hold to balance (spec: 10 minutes). */
  holdSeconds: env.get('PAYOUT_HOLD_SECONDS', 600),
  /** How long the sandbox bank takes to decide a transfer. */
  sandboxBankDelayMs: env.get('SANDBOX_BANK_DELAY_MS', 3000),
}

export default payoutsConfig
