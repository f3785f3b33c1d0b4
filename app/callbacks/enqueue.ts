import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { dispatch, queue } from '#core/queue/queue_manager'
import { JOBS } from '#core/queue/jobs'

export interface DeliverCallbackData {
  outboxId: number
  series: number
}

/**
 * The BullMQ job id of a row's delivery: `callback-<id>` for the first series,
 * `callback-<id>-resend-<n>` after the n-th resend. Adding a job whose id
 * exists is a no-op, so enqueueing twice (after-commit hook and sweep) is
 * harmless.
 */
export function callbackJobId(outboxId: number, series: number) {
  return series === 0 ? `callback-${outboxId}` : `callback-${outboxId}-resend-${series}`
}

/** Adds the delivery job of the row's current series and notes it on the row. */
export async function enqueueDelivery(outboxId: number, series: number) {
  const jobId = callbackJobId(outboxId, series)
  await dispatch('deliverCallback', { outboxId, series } satisfies DeliverCallbackData, { jobId })
  await db
    .from('callback_outbox')
    .where({ id: outboxId, series })
    .update({ enqueued_at: new Date(), job_id: jobId })
  return jobId
}

/**
 * Enqueues the row's delivery once the transaction that wrote it has
 * committed; nothing happens when it rolls back. Lucid awaits after-commit
 * hooks inside commit(), so this must not wait on a Redis that is away:
 * dispatch() gives up within about a second. Errors are logged, never thrown:
 * the state change is committed and the sweep will enqueue the row.
 */
export function enqueueAfterCommit(
  trx: TransactionClientContract,
  outboxId: number,
  series: number
) {
  trx.after('commit', async () => {
    try {
      await enqueueDelivery(outboxId, series)
    } catch (error) {
      logger.warn(
        { err: error, callback_outbox_id: outboxId },
        'callback job not enqueued; dispatchPendingCallbacks will enqueue it'
      )
    }
  })
}

/**
 * Safety net (job callback.dispatch-pending, every 30 s): every pending row
 * whose delivery job does not exist is enqueued again: rows never enqueued
 * (Redis was down at commit), and rows whose job was lost (Redis data loss,
 * an obliterated queue). A job that ended while its row is still pending (its
 * final database write failed) is replaced; the handler counts attempts from
 * the row, so the row still gets at most 5 in its series.
 */
export async function dispatchPendingCallbacks(limit = 1000) {
  const rows: Array<{ id: string | number; series: number; enqueued_at: Date | null }> = await db
    .from('callback_outbox')
    .where('state', 'pending')
    .orderBy('id')
    .limit(limit)
    .select('id', 'series', 'enqueued_at')

  const callbacks = queue(JOBS.deliverCallback.queue)
  let enqueued = 0
  for (const row of rows) {
    const id = Number(row.id)
    const jobId = callbackJobId(id, row.series)
    if (row.enqueued_at) {
      const state = await callbacks.getJobState(jobId)
      if (state === 'completed' || state === 'failed') {
        await callbacks.remove(jobId)
      } else if (state !== 'unknown') {
        continue // waiting, delayed, active, prioritized: it will run
      }
    }
    await enqueueDelivery(id, row.series)
    enqueued++
  }
  if (enqueued > 0) logger.info({ enqueued }, 'pending callbacks enqueued by the sweep')
  return { pending: rows.length, enqueued }
}
