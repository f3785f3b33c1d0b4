import type { Job, Worker } from 'bullmq'
import { callbackDeliveries, jobDuration, jobFailures } from './registry.js'

/** Seconds a finished job attempt ran, from BullMQ's own timestamps. */
function runSeconds(job: Job) {
  const started = job.processedOn ?? Date.now()
  return Math.max(0, ((job.finishedOn ?? Date.now()) - started) / 1000)
}

/**
 * Job durations and failures of the worker process's BullMQ workers, by
 * queue and job name. Called once with the workers startWorkers() creates
 * (app/core/queue/worker_process.ts).
 */
export function observeWorkers(workers: Worker[]) {
  for (const worker of workers) {
    worker.on('completed', (job) => {
      jobDuration.labels(worker.name, job.name, 'completed').observe(runSeconds(job))
    })
    worker.on('failed', (job, error) => {
      if (!job) return
      jobDuration.labels(worker.name, job.name, 'failed').observe(runSeconds(job))
      // BullMQ retries unless the attempts are used up or the handler said never.
      const final =
        error?.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)
      jobFailures.labels(worker.name, job.name, String(final)).inc()
    })
  }
}

/**
 * One merchant callback delivery attempt, by the outbox row's state after it
 * (app/callbacks/delivery.ts): delivered, failed for good, or pending (retry).
 */
export function recordCallbackDelivery(state: 'delivered' | 'failed' | 'pending', attempt: number) {
  callbackDeliveries.labels(state === 'pending' ? 'retry' : state, String(attempt)).inc()
}
