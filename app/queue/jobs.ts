/**
 * Every queue, job name, retry policy and schedule of the gateway, in one
 * place. Jobs are idempotent: BullMQ delivers at least once, so a handler that
 * runs twice must leave the same result as running once.
 */
export const QUEUE_NAMES = ['payments'] as const
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
} as const satisfies Record<string, JobDefinition>

export type JobKey = keyof typeof JOBS

/** Repeatable jobs, registered as BullMQ job schedulers (one per id, whatever the number of workers). */
export const SCHEDULES: Array<{ id: string; job: JobKey; everyMs: number }> = [
  { id: 'sweep-expired-payments', job: 'sweepExpiredPayments', everyMs: 60_000 },
]
