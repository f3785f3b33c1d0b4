import { hostname } from 'node:os'
import { Worker } from 'bullmq'
import type { Logger } from '@adonisjs/core/logger'
import queueConfig from '#config/queue'
import { jobHandler, type QueueName } from '#core/queue/registry'
import {
  bullConnection,
  closeQueues,
  queueConnection,
  queuePrefix,
  workerLockOptions,
} from '#core/queue/queue_manager'
import {
  missingSchedules,
  rebuildFromDatabase,
  redisChange,
  registerSchedules,
} from '#core/queue/schedules'
import {
  newWorkerId,
  publishWorkerStatus,
  removeWorkerStatus,
  type WorkerStatus,
} from '#core/queue/worker_status'
import { observeWorkers } from '#metrics/job_metrics'

/**
 * The worker process's BullMQ workers for `queues`, and the guard of their
 * schedules. Redis may lose every key (a restart without persistence) or its
 * newest writes (a failover to a replica that had not received them): the
 * check, on reconnect and periodically, then registers the schedules again
 * and, when the server is another one or lost its data, runs the sweeps that
 * rebuild the lost jobs from the database at once (rebuildFromDatabase). Each
 * check is published for /health. Returns a function that stops it all,
 * letting running jobs finish. `concurrency` applies to every queue not named
 * in `perQueue`.
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
          const load = jobHandler(job.name)
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
  observeWorkers(workers)
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
    rebuilt_at: null,
    started_at: new Date().toISOString(),
    checked_at: new Date().toISOString(),
  }
  const statusConnection = connections[0]
  // The check reads and writes through the queues' own connection, so that
  // the identity it compares is that of the server the schedules and the
  // rebuild jobs go to.
  const checkConnection = queueConnection()

  let failedBefore = false
  let retryTimer: NodeJS.Timeout | undefined
  const checkOnce = async () => {
    try {
      const change = await redisChange(checkConnection)
      let missing = await missingSchedules(queues)
      if (missing.length > 0) {
        logger.warn({ missing }, 'schedules missing from Redis; registering them again')
      }
      if (change) {
        // No record at all: a first start, or a Redis that lost everything (restarted
        // empty, flushed); another server's record: a failover, which may have lost writes.
        if (change.previous) {
          logger.warn(
            { redis_data: 'other server' },
            'Redis is not the server the queues were last rebuilt on (a failover?); rebuilding from the database'
          )
        } else {
          logger.info(
            { redis_data: 'none' },
            'Redis holds no record of the queues (first start, or its data was lost); rebuilding from the database'
          )
        }
        // Registers the schedules too.
        await rebuildFromDatabase(checkConnection, queues, change)
        status.rebuilt_at = new Date().toISOString()
      } else if (missing.length > 0) {
        await registerSchedules(queues)
      }
      if (missing.length > 0) {
        status.restored_at = new Date().toISOString()
        missing = await missingSchedules(queues)
      }
      status.schedules = missing.length > 0 ? 'missing' : 'ok'
      status.missing = missing
      status.checked_at = new Date().toISOString()
      await publishWorkerStatus(statusConnection, status, interval * 3)
      failedBefore = false
    } catch (error) {
      // Once per outage, not on every retry.
      if (!failedBefore) logger.warn({ err: error }, 'schedule check failed')
      failedBefore = true
      // Redis answered but the check did not finish (a command timed out, a
      // failover in the middle): try again soon rather than at the next
      // interval. While Redis is away, the reconnect starts the next check.
      clearTimeout(retryTimer)
      retryTimer = setTimeout(() => {
        if (checkConnection.status === 'ready') void checkSchedules()
      }, 1000)
    }
  }

  // One check at a time. A check asked for while one runs (a reconnect during
  // a periodic check) runs again after it, never merged into it: the running
  // one may have read the server that just went away.
  let checking: Promise<void> | undefined
  let again = false
  const checkSchedules = () => {
    if (checking) {
      again = true
      return checking
    }
    checking = (async () => {
      try {
        do {
          again = false
          await checkOnce()
        } while (again)
      } finally {
        checking = undefined
      }
    })()
    return checking
  }

  await registerSchedules(queues)
  await checkSchedules()
  const timer = setInterval(checkSchedules, interval)
  // After a reconnect Redis may be another server (a promoted replica) or a
  // new, empty instance: check at once, on the connection the check uses.
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
    clearTimeout(retryTimer)
    await Promise.all(workers.map((worker) => worker.close()))
    await removeWorkerStatus(statusConnection, status.id).catch(() => {})
    await closeQueues()
    await Promise.all(
      connections.map((connection) => connection.quit().catch(() => connection.disconnect()))
    )
  }
}
