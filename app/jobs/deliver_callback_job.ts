import { UnrecoverableError, type Job } from 'bullmq'
import { deliverCallback } from '#callbacks/delivery'
import type { DeliverCallbackData } from '#callbacks/enqueue'

/**
 * callback.deliver — one attempt per run. A failed attempt throws so that
 * BullMQ retries after the fixed backoff; a final failure (refused target, or
 * the row's last attempt) throws UnrecoverableError so that no retry follows.
 * Duplicate or superseded jobs complete without posting.
 */
export default async function deliverCallbackJob(job: Job<DeliverCallbackData>) {
  const outcome = await deliverCallback(
    { outboxId: Number(job.data.outboxId), series: Number(job.data.series ?? 0) },
    { id: job.id!, lastJobAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) }
  )
  if (outcome.result === 'retry') throw new Error(outcome.error ?? 'callback attempt failed')
  if (outcome.result === 'failed') {
    throw new UnrecoverableError(outcome.error ?? 'callback delivery failed')
  }
  return outcome
}
