import env from '#start/env'

/** The back-office: operator sessions and the login rate limit. */
const adminConfig = {
  /** A session ends after this much inactivity (also the session cookie's life). */
  idleTimeoutMinutes: env.get('ADMIN_IDLE_TIMEOUT_MINUTES', 30),
  /** ...and at the latest this long after login, active or not. */
  sessionMaxHours: env.get('ADMIN_SESSION_MAX_HOURS', 12),
  /** Failed sign-ins allowed per account in the window, then that account alone is refused. */
  loginFailures: 5,
  loginFailureWindow: '15 mins',
  /**
   * Failed sign-ins on unknown accounts (emails that are no operator) allowed
   * per address in the window, then guesses from that address are refused.
   * Failures on real accounts never count here: one operator cannot lock out
   * the others sharing the office's address.
   */
  loginUnknownFailuresPerAddress: 20,
  /** How long an enrolment link (a new operator's, or one issued to reset a password) works. */
  enrolmentLinkHours: env.get('ADMIN_ENROLMENT_LINK_HOURS', 72),
  /**
   * The back-office's address as operators reach it, for the links the
   * commands print. Default: this machine's development server.
   */
  publicUrl: env
    .get('ADMIN_PUBLIC_URL', `https://localhost:${env.get('PORT', 3333)}`)
    .replace(/\/+$/, ''),
  /** Four eyes: decisions that wait for a second operator. */
  approvals: {
    /**
     * A request not decided within this many hours expires and can no longer
     * be approved (the worker's sweep marks it; approving checks it too).
     */
    expiryHours: env.get('ADMIN_APPROVAL_EXPIRY_HOURS', 24),
  },
}

export default adminConfig
