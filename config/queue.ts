import env from '#start/env'

/** The background worker: BullMQ queues, locks and schedules. */
const queueConfig = {
  /**
   * Prefix of every BullMQ key: a Redis Cluster hash tag, so that all keys of
   * a queue land in one slot.
   */
  prefix: env.get('QUEUE_PREFIX', env.get('NODE_ENV') === 'test' ? '{gw-test}' : '{gw}'),

  /**
   * How long a worker holds a job before BullMQ considers it stalled (its
   * process died) and hands it to another worker; also the stalled check
   * interval. BullMQ's default, 30 s.
   */
  lockDurationMs: env.get('QUEUE_LOCK_DURATION_MS', 30_000),

  /**
   * How often the safety-net sweeps and settlement run (default 60 s). The
   * sweeps also treat an order untouched for one interval as stale.
   */
  sweepIntervalMs: env.get('SWEEP_INTERVAL_MS', 60_000),

  /**
   * How often open payment orders past their expire_datetime are expired,
   * and payout holds past their hold period released (default 5 s). Both are
   * these sweeps alone, not a delayed job per order: a job per order cost
   * every create a Redis write and the worker a job, and kept one job per
   * open order in Redis.
   */
  expirySweepIntervalMs: env.get('EXPIRY_SWEEP_INTERVAL_MS', 5_000),

  /** How often a worker checks that Redis still holds its schedules (default 30 s). */
  scheduleCheckIntervalMs: env.get('SCHEDULE_CHECK_INTERVAL_MS', 30_000),
}

export default queueConfig
