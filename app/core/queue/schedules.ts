import type { Redis } from 'ioredis'
import { dispatchAll, queue, queuePrefix } from '#core/queue/queue_manager'
import {
  jobDefinition,
  jobSchedules,
  queueNames,
  rebuildScheduleIds,
  type QueueName,
} from '#core/queue/registry'

/** The registered schedules that belong to the given queues. */
function schedulesOf(queues: readonly QueueName[]) {
  return jobSchedules().filter((schedule) => queues.includes(jobDefinition(schedule.job).queue))
}

/**
 * Upserts the BullMQ job schedulers of the given queues. Upserting by id is
 * idempotent, so every worker may do it at start, after a reconnect and
 * whenever it finds one missing, without doubling a schedule.
 */
export async function registerSchedules(queues: readonly QueueName[]) {
  for (const schedule of schedulesOf(queues)) {
    const definition = jobDefinition(schedule.job)
    await queue(definition.queue).upsertJobScheduler(
      schedule.id,
      { every: schedule.everyMs },
      { name: definition.name, data: {}, opts: { attempts: definition.attempts } }
    )
  }
}

/**
 * Ids of the schedules of the given queues that Redis does not hold: after a
 * Redis restart without persistence (or a flush) every scheduler is gone, and
 * with it expiry sweeps, payout sweeps, callback dispatch and settlement.
 */
export async function missingSchedules(queues: readonly QueueName[]) {
  const missing: string[] = []
  for (const schedule of schedulesOf(queues)) {
    const scheduler = await queue(jobDefinition(schedule.job).queue).getJobScheduler(schedule.id)
    if (!scheduler) missing.push(schedule.id)
  }
  return missing
}

/**
 * The run_id of the Redis server that holds this database, written under
 * this key by the last worker that rebuilt it. Keys replicate, run_ids do not:
 * a replica promoted by Sentinel, or a server restarted (empty or from an
 * older snapshot), holds another run_id or no key at all.
 */
const IDENTITY_KEY = `${queuePrefix}:redis-identity`

/** A Redis server that is not the one this database was last rebuilt on. */
export interface RedisChange {
  runId: string
  /** The run_id recorded before, or null when the key is gone (data lost). */
  previous: string | null
}

/** The run_id of the server behind `connection`: new on every start of Redis. */
export async function redisRunId(connection: Redis) {
  const match = /^run_id:([0-9a-f]+)\s*$/m.exec(await connection.info('server'))
  if (!match) throw new Error('Redis INFO server has no run_id')
  return match[1]
}

/**
 * Whether the Redis behind `connection` may have lost writes since the last
 * rebuild: another server (a failover, since replication is asynchronous, may
 * have dropped the old master's newest writes), or the same one without the
 * key (flushed). null when nothing changed.
 */
export async function redisChange(connection: Redis): Promise<RedisChange | null> {
  const runId = await redisRunId(connection)
  const previous = await connection.get(IDENTITY_KEY)
  return previous === runId ? null : { runId, previous }
}

/**
 * Rebuilds from the database what Redis lost: the schedules of `queues`
 * (upserted, idempotent) and, at once, one run of every rebuild sweep, in
 * whatever queue it belongs (other workers run it when this one does not work
 * that queue). Then records the server's run_id. Job ids are derived from the
 * change, so two workers rebuilding after the same failover add each sweep
 * once; a worker that dies half way leaves the old identity for the next to
 * find.
 */
export async function rebuildFromDatabase(
  connection: Redis,
  queues: readonly QueueName[],
  change: RedisChange
) {
  await registerSchedules(queues)
  const rebuildIds = rebuildScheduleIds()
  const rebuild = jobSchedules().filter((schedule) => rebuildIds.includes(schedule.id))
  for (const name of queueNames()) {
    const sweeps = rebuild.filter((schedule) => jobDefinition(schedule.job).queue === name)
    if (sweeps.length === 0) continue
    await dispatchAll(
      sweeps.map((schedule) => ({
        job: schedule.job,
        data: {},
        options: {
          jobId: `rebuild-${schedule.id}-${change.runId}-${change.previous ?? 'empty'}`,
        },
      }))
    )
  }
  await connection.set(IDENTITY_KEY, change.runId)
}
