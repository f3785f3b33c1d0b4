import logger from '@adonisjs/core/services/logger'
import { withDeadlockRetry } from '#core/db_retry'

/** Rows handled at once by a sweep: each in its own short transaction. */
const SWEEP_LANES = 4

export interface DueRow {
  id: number
  platformOrderId: string
}

/**
 * The worker's time-based sweeps (payment expiry, payout hold release):
 * every due row, oldest first, a batch at a time until none is left, each
 * handled in its own transaction by `apply` (idempotent, true when it changed
 * the row). Rows are independent: one that fails is logged and left for the
 * next run, the others go ahead; the run then fails so that it shows.
 */
export async function sweepDue(options: {
  /** The next batch of due rows, leaving out `skip` (rows that failed in this run). */
  due: (skip: number[], batch: number) => Promise<DueRow[]>
  apply: (id: number) => Promise<boolean>
  /** The log line of a row that failed: "order not expired". */
  failure: string
  /** The run's error when rows failed. */
  summary: (failed: number, done: number) => string
  batch: number
}) {
  let done = 0
  // Rows that failed in this run are not tried again until the next one.
  const failed = new Set<number>()
  for (;;) {
    const due = await options.due([...failed], options.batch)
    const queue = [...due]
    let doneNow = 0
    const failedBefore = failed.size
    const lane = async () => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        try {
          if (await withDeadlockRetry(() => options.apply(row.id))) doneNow++
        } catch (error) {
          failed.add(row.id)
          logger.error(
            { err: error, platform_order_id: row.platformOrderId },
            `${options.failure}; the next sweep tries again`
          )
        }
      }
    }
    await Promise.all(Array.from({ length: SWEEP_LANES }, lane))
    done += doneNow
    // A short batch was the last. A full one where nothing changed and nothing
    // failed (another sweep got there first) would only repeat itself; failed
    // rows are left out of the next batches, so the loop always moves on.
    if (due.length < options.batch || (doneNow === 0 && failedBefore === failed.size)) break
  }
  if (failed.size > 0) {
    throw new Error(options.summary(failed.size, done))
  }
  return done
}
