import env from '#start/env'

/** Delivery of merchant callbacks (spec: Events). */
const callbacksConfig = {
  /** Spec: up to 5 attempts, 60 seconds apart. */
  retryDelayMs: env.get('CALLBACK_RETRY_DELAY_MS', 60_000),
  /** Per-attempt limit: DNS, connect, TLS, status line and answer excerpt together. */
  timeoutMs: env.get('CALLBACK_TIMEOUT_MS', 10_000),
  /** Deliver to loopback, private and link-local targets (development, tests only). */
  allowPrivateTargets: env.get('CALLBACK_ALLOW_PRIVATE_TARGETS', false),
  /**
   * Deliveries the worker runs at once (the callbacks queue's own concurrency).
   * A delivery mostly waits on the network, so far more than the other queues' 5.
   */
  concurrency: env.get('CALLBACK_CONCURRENCY', 50),
  /** PEM file of certificates trusted for callback targets besides the default roots. */
  caPath: env.get('CALLBACK_CA_PATH'),
}

export default callbacksConfig
