import { Queue, type JobsOptions } from 'bullmq'
import { Redis } from 'ioredis'
import env from '#start/env'
import { redisOptions } from '#services/redis'
import { JOBS, type JobKey, type QueueName } from '#queue/jobs'

/**
 * BullMQ needs its own connections (blocking commands, maxRetriesPerRequest
 * null). The prefix is a Redis Cluster hash tag so that all keys of a queue
 * land in one slot.
 */
export const queuePrefix = env.get(
  'QUEUE_PREFIX',
  process.env.NODE_ENV === 'test' ? '{gw-test}' : '{gw}'
)

/**
 * How long a worker holds a job before BullMQ considers it stalled (its
 * process died) and hands it to another worker; also the stalled check
 * interval. BullMQ's default, 30 s, unless QUEUE_LOCK_DURATION_MS says otherwise.
 */
export const workerLockOptions = () => {
  const lockDuration = env.get('QUEUE_LOCK_DURATION_MS', 30_000)
  return { lockDuration, stalledInterval: lockDuration }
}

export function bullConnection() {
  const connection = new Redis(redisOptions({ maxRetriesPerRequest: null, lazyConnect: false }))
  connection.on('error', () => {})
  return connection
}

const queues = new Map<QueueName, Queue>()
let sharedConnection: Redis | undefined

export function queue(name: QueueName): Queue {
  let instance = queues.get(name)
  if (!instance) {
    sharedConnection ??= bullConnection()
    instance = new Queue(name, { connection: sharedConnection, prefix: queuePrefix })
    queues.set(name, instance)
  }
  return instance
}

/** Adds a job with the retry policy of its definition. */
export async function dispatch(
  job: JobKey,
  data: Record<string, unknown>,
  options: JobsOptions = {}
) {
  const definition = JOBS[job]
  return queue(definition.queue).add(definition.name, data, {
    attempts: definition.attempts,
    backoff: definition.backoff,
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 5000 },
    ...options,
  })
}

export async function closeQueues() {
  await Promise.all([...queues.values()].map((instance) => instance.close()))
  queues.clear()
  const connection = sharedConnection
  sharedConnection = undefined
  await connection?.quit().catch(() => connection.disconnect())
}
