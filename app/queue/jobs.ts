import env from '#start/env'

/** Spec: up to 5 attempts, 60 seconds apart. Shorter only in tests. */
const callbackRetryDelayMs = env.get('CALLBACK_RETRY_DELAY_MS', 60_000)

/**
 * Every queue, job name, retry policy and schedule of the gateway, in one
 * place. Jobs are idempotent: BullMQ delivers at least once, so a handler that
 * runs twice must leave the same result as running once.
 */
export const QUEUE_NAMES = ['payments', 'payouts', 'callbacks', 'reconciliation'] as const
export type QueueName = (typeof QUEUE_NAMES)[number]

export interface JobDefinition {
  queue: QueueName
  name: string
  attempts: number
  backoff: { type: 'fixed' | 'exponential'; delay: number }
}

export const JOBS = {
  /** Turns one open payment order past its expire_datetime into error. */
  expirePayment: {
    queue: 'payments',
    name: 'payment.expire',
    attempts: 10,
    backoff: { type: 'exponential', delay: 2000 },
  },
  /** Safety net: expires any open order whose own expiry job was lost. */
  sweepExpiredPayments: {
    queue: 'payments',
    name: 'payment.sweep-expired',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** Hands a new withdraw/settlement order to its payout connector. */
  dispatchPayout: {
    queue: 'payouts',
    name: 'payout.dispatch',
    attempts: 10,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** Returns a hold to balance when the payout is still open after the hold period. */
  releasePayoutHold: {
    queue: 'payouts',
    name: 'payout.release-hold',
    attempts: 10,
    backoff: { type: 'exponential', delay: 5000 },
  },
  /** The sandbox bank's answer to a transfer it accepted. */
  sandboxBankOutcome: {
    queue: 'payouts',
    name: 'payout.sandbox-outcome',
    attempts: 10,
    backoff: { type: 'exponential', delay: 2000 },
  },
  /** Safety net: dispatches orders stuck in new, releases overdue holds. */
  sweepPayouts: {
    queue: 'payouts',
    name: 'payout.sweep',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** POSTs one callback_outbox row to the merchant's notify_url (job id = row id). */
  deliverCallback: {
    queue: 'callbacks',
    name: 'callback.deliver',
    attempts: 5,
    backoff: { type: 'fixed', delay: callbackRetryDelayMs },
  },
  /** Safety net: enqueues outbox rows whose delivery job was never created. */
  dispatchPendingCallbacks: {
    queue: 'callbacks',
    name: 'callback.dispatch-pending',
    attempts: 1,
    backoff: { type: 'fixed', delay: 0 },
  },
  /** unsettled_paid → settled_paid once the settlement delay has passed. */
  settlePayments: {
    queue: 'reconciliation',
    name: 'payment.settle',
    attempts: 3,
    backoff: { type: 'exponential', delay: 5000 },
  },
} as const satisfies Record<string, JobDefinition>

export type JobKey = keyof typeof JOBS

/** Repeatable jobs, registered as BullMQ job schedulers (one per id, whatever the number of workers). */
export const SCHEDULES: Array<{ id: string; job: JobKey; everyMs: number }> = [
  { id: 'sweep-expired-payments', job: 'sweepExpiredPayments', everyMs: 60_000 },
  { id: 'sweep-payouts', job: 'sweepPayouts', everyMs: 60_000 },
  { id: 'dispatch-pending-callbacks', job: 'dispatchPendingCallbacks', everyMs: 30_000 },
  { id: 'settle-payments', job: 'settlePayments', everyMs: 60_000 },
]
