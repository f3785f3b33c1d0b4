import { Worker } from 'bullmq'
import { bullConnection, queuePrefix, workerLockOptions } from '#core/queue/queue_manager'
import { HANDLERS } from '#jobs/handlers'
import type { QueueName } from '#jobs/jobs'

/**
 * A real BullMQ worker inside the test process, running the same handlers as
 * `queue:work`. Returns a function that closes it and its connection.
 */
export function startTestWorker(queue: QueueName) {
  const connection = bullConnection()
  const worker = new Worker(queue, async (job) => (await HANDLERS[job.name]())(job), {
    connection,
    prefix: queuePrefix,
    concurrency: 5,
    ...workerLockOptions(),
  })
  return async () => {
    await worker.close()
    await connection.quit()
  }
}

export async function until(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}
