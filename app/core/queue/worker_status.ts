import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { queuePrefix } from '#core/queue/queue_manager'

/**
 * What a worker reports about itself after each schedule check. /health is
 * public, so a worker is named by a random id (its start log line pairs the id
 * with the host and pid), never by host name.
 */
export interface WorkerStatus {
  id: string
  queues: string[]
  /** `missing` while Redis lacks a schedule and the worker could not put it back. */
  schedules: 'ok' | 'missing'
  missing: string[]
  /** When this worker last had to register missing schedules again. */
  restored_at: string | null
  /**
   * When this worker last rebuilt Redis's jobs from the database, having found
   * another Redis server (a failover) or one that lost its data.
   */
  rebuilt_at: string | null
  started_at: string
  checked_at: string
}

const KEY = `${queuePrefix}:worker:`

export function newWorkerId() {
  return randomBytes(6).toString('hex')
}

/**
 * Writes a worker's status under its own key, expiring after `ttlMs`: a
 * worker that stops reporting (killed, hung, cut off from Redis) disappears
 * from /health by itself.
 */
export async function publishWorkerStatus(redis: Redis, status: WorkerStatus, ttlMs: number) {
  await redis.set(KEY + status.id, JSON.stringify(status), 'PX', ttlMs)
}

export async function removeWorkerStatus(redis: Redis, id: string) {
  await redis.del(KEY + id)
}

/** Every worker that reported recently. */
export async function listWorkerStatuses(redis: Redis): Promise<WorkerStatus[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${KEY}*`, 'COUNT', 100)
    keys.push(...batch)
    cursor = next
  } while (cursor !== '0')
  if (keys.length === 0) return []
  const values = await redis.mget(...keys)
  return values
    .filter((value): value is string => value !== null)
    .map((value) => JSON.parse(value) as WorkerStatus)
    .sort((a, b) => a.id.localeCompare(b.id))
}
