import { JOBS, SCHEDULES, type QueueName } from '#core/queue/jobs'
import { queue } from '#core/queue/queue_manager'

/** The schedules that belong to the given queues. */
function schedulesOf(queues: readonly QueueName[]) {
  return SCHEDULES.filter((schedule) => queues.includes(JOBS[schedule.job].queue))
}

/**
 * Upserts the BullMQ job schedulers of the given queues. Upserting by id is
 * idempotent, so every worker may do it at start, after a reconnect and
 * whenever it finds one missing, without doubling a schedule.
 */
export async function registerSchedules(queues: readonly QueueName[]) {
  for (const schedule of schedulesOf(queues)) {
    const definition = JOBS[schedule.job]
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
    const scheduler = await queue(JOBS[schedule.job].queue).getJobScheduler(schedule.id)
    if (!scheduler) missing.push(schedule.id)
  }
  return missing
}
