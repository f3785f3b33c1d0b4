import { Queue, type JobsOptions } from 'bullmq'
import type { Redis, RedisOptions } from 'ioredis'
import queueConfig from '#config/queue'
import { REDIS_COMMAND_TIMEOUT_MS, createRedis } from '#core/redis'
import { jobDefinition, type JobKey, type QueueName } from '#core/queue/registry'

export const queuePrefix = queueConfig.prefix

/** A stalled job (its worker died) is handed to another worker after the lock runs out. */
export const workerLockOptions = () => ({
  lockDuration: queueConfig.lockDurationMs,
  stalledInterval: queueConfig.lockDurationMs,
})

/**
 * A connection for a BullMQ Worker: blocking commands, retried until Redis is
 * back (through Sentinel when configured; BullMQ's duplicates of it for its
 * blocking reads keep the same options).
 */
export function bullConnection(overrides: RedisOptions = {}) {
  return createRedis({ maxRetriesPerRequest: null, lazyConnect: false, ...overrides })
}

const queues = new Map<QueueName, Queue>()
let sharedConnection: Redis | undefined

/**
 * The connection of the queues below, created with the first of them: the
 * worker's schedule check listens on it for a reconnect.
 */
export function queueConnection(): Redis {
  sharedConnection ??= bullConnection({
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  })
  return sharedConnection
}

/**
 * The queues this process adds jobs to (and reads schedulers from). Their
 * connection fails fast instead of queueing commands while Redis is away: a
 * job added after a commit is best effort, the sweeps are the fallback, and a
 * request must never wait for Redis to come back.
 */
export function queue(name: QueueName): Queue {
  let instance = queues.get(name)
  if (!instance) {
    instance = new Queue(name, { connection: queueConnection(), prefix: queuePrefix })
    // Connection errors repeat on every reconnect attempt while Redis is away;
    // the calls that fail say so, and /health shows the outage.
    instance.on('error', () => {})
    queues.set(name, instance)
  }
  return instance
}

export interface JobRequest {
  job: JobKey
  data: Record<string, unknown>
  options?: JobsOptions
}

/**
 * Adds a job with the retry policy of its definition. Fails within about a
 * second when Redis is away: at once once the connection is known lost, and
 * after REDIS_COMMAND_TIMEOUT_MS while it is still making its first connect
 * (BullMQ would otherwise wait for Redis indefinitely). Callers that add a
 * job after a commit treat a failure as "the sweep will do it".
 */
export async function dispatch(
  job: JobKey,
  data: Record<string, unknown>,
  options: JobsOptions = {}
) {
  const [added] = await dispatchAll([{ job, data, options }])
  return added
}

/**
 * Adds jobs of one queue in one round trip to Redis (BullMQ's addBulk: one
 * MULTI), each with the retry policy of its definition; fails as dispatch does.
 */
export async function dispatchAll(requests: JobRequest[]) {
  const queueName = jobDefinition(requests[0].job).queue
  if (requests.some(({ job }) => jobDefinition(job).queue !== queueName)) {
    throw new Error('dispatchAll takes jobs of one queue')
  }
  const status = queueConnection().status
  if (['reconnecting', 'close', 'end'].includes(status)) {
    throw new Error(`Redis is not connected (${status}); jobs not added`)
  }
  const names = requests.map(({ job }) => job).join(', ')
  const adding = queue(queueName).addBulk(
    requests.map(({ job, data, options }) => ({
      name: jobDefinition(job).name,
      data,
      opts: {
        attempts: jobDefinition(job).attempts,
        backoff: jobDefinition(job).backoff,
        removeOnComplete: { count: 1000 },
        removeOnFail: { count: 5000 },
        ...options,
      },
    }))
  )
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      adding,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`Redis did not take job ${names} within ${REDIS_COMMAND_TIMEOUT_MS} ms`)
            ),
          REDIS_COMMAND_TIMEOUT_MS
        )
      }),
    ])
  } catch (error) {
    adding.catch(() => {}) // it may still complete or fail later; nobody waits for it
    throw error
  } finally {
    clearTimeout(timer)
  }
}

export async function closeQueues() {
  await Promise.all([...queues.values()].map((instance) => instance.close()))
  queues.clear()
  const connection = sharedConnection
  sharedConnection = undefined
  await connection?.quit().catch(() => connection.disconnect())
}
