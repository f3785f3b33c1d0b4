import { hostname } from 'node:os'
import { Worker } from 'bullmq'
import type { Logger } from '@adonisjs/core/logger'
import queueConfig from '#config/queue'
import { HANDLERS } from '#core/queue/handlers'
import type { QueueName } from '#core/queue/jobs'
import {
  bullConnection,
  closeQueues,
  queueConnection,
  queuePrefix,
  workerLockOptions,
} from '#core/queue/queue_manager'
import { missingSchedules, registerSchedules } from '#core/queue/schedules'
import {
  newWorkerId,
  publishWorkerStatus,
  removeWorkerStatus,
  type WorkerStatus,
} from '#core/queue/worker_status'

/**
 * The worker process's BullMQ workers for `queues`, and the guard of their
 * schedules. Redis may lose every key (a restart without persistence): the
 * schedules are then registered again on reconnect and by a periodic check,
 * and each check is published for /health. Returns a function that stops it
 * all, letting running jobs finish. `concurrency` applies to every queue not
 * named in `perQueue`.
 */
export async function startWorkers(
  queues: QueueName[],
  concurrency: number,
  logger: Logger,
  perQueue: Partial<Record<QueueName, number>> = {}
) {
  const concurrencyOf = (name: QueueName) => perQueue[name] ?? concurrency
  // BullMQ leaves connections it was given open on close(): keep them to quit on shutdown.
  const connections = queues.map(() => bullConnection())
  const workers = queues.map(
    (name, index) =>
      new Worker(
        name,
        async (job) => {
          const load = HANDLERS[job.name]
          if (!load) throw new Error(`No handler for job ${job.name}`)
          return (await load())(job)
        },
        {
          connection: connections[index],
          prefix: queuePrefix,
          concurrency: concurrencyOf(name),
          ...workerLockOptions(),
        }
      )
  )
  let redisLost = false
  for (const worker of workers) {
    worker.on('failed', (job, error) =>
      logger.warn(
        { job: job?.name, job_id: job?.id, attempt: job?.attemptsMade, err: error },
        'job failed'
      )
    )
    // Once per outage, not on every reconnect attempt.
    worker.on('error', (error) => {
      if (redisLost) return
      redisLost = true
      logger.warn(
        { err: error },
        'worker error (further errors are not logged until Redis is back)'
      )
    })
  }

  const interval = queueConfig.scheduleCheckIntervalMs
  const status: WorkerStatus = {
    id: newWorkerId(),
    queues,
    schedules: 'ok',
    missing: [],
    restored_at: null,
    started_at: new Date().toISOString(),
    checked_at: new Date().toISOString(),
  }
  const statusConnection = connections[0]

  let checking: Promise<void> | undefined
  const checkSchedules = () => {
    // One check at a time: while Redis is down a check waits for the reconnect.
    checking ??= (async () => {
      try {
        let missing = await missingSchedules(queues)
        if (missing.length > 0) {
          logger.warn({ missing }, 'schedules missing from Redis; registering them again')
          await registerSchedules(queues)
          status.restored_at = new Date().toISOString()
          missing = await missingSchedules(queues)
        }
        status.schedules = missing.length > 0 ? 'missing' : 'ok'
        status.missing = missing
        status.checked_at = new Date().toISOString()
        await publishWorkerStatus(statusConnection, status, interval * 3)
      } catch (error) {
        logger.warn({ err: error }, 'schedule check failed')
      } finally {
        checking = undefined
      }
    })()
    return checking
  }

  await registerSchedules(queues)
  await checkSchedules()
  const timer = setInterval(checkSchedules, interval)
  // After a reconnect Redis may be a new, empty instance: check at once, on
  // the connection the check itself uses.
  const checkConnection = queueConnection()
  let connectedOnce = checkConnection.status === 'ready'
  checkConnection.on('ready', () => {
    redisLost = false
    if (connectedOnce) void checkSchedules()
    connectedOnce = true
  })

  logger.info(
    {
      worker: status.id,
      host: hostname(),
      pid: process.pid,
      queues,
      concurrency: Object.fromEntries(queues.map((name) => [name, concurrencyOf(name)])),
    },
    'worker started'
  )

  return async function stop() {
    clearInterval(timer)
    await Promise.all(workers.map((worker) => worker.close()))
    await removeWorkerStatus(statusConnection, status.id).catch(() => {})
    await closeQueues()
    await Promise.all(
      connections.map((connection) => connection.quit().catch(() => connection.disconnect()))
    )
  }
}
