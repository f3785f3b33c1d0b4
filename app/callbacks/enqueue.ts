import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { dispatch, queue } from '#core/queue/queue_manager'
import { jobDefinition } from '#core/queue/registry'
import { orderJobId } from '#core/queue/job_ids'

export interface DeliverCallbackData {
  outboxId: number
  series: number
}

/** What names an outbox row for good: its order's platform_order_id and the status. */
export interface CallbackRowKey {
  id: number
  platformOrderId: string
  status: string
}

/**
 * The BullMQ job id of a row's delivery: `callback-<platform_order_id>-<status>`
 * for the first series, with `-resend-<n>` after the n-th resend (orderJobId
 * says why not the row's id). Enqueueing twice (after-commit hook and sweep)
 * is harmless.
 */
export function callbackJobId(row: Omit<CallbackRowKey, 'id'>, series: number) {
  return series === 0
    ? orderJobId('callback', row.platformOrderId, row.status)
    : orderJobId('callback', row.platformOrderId, row.status, 'resend', series)
}

/** Adds the delivery job of the row's current series and notes it on the row. */
export async function enqueueDelivery(row: CallbackRowKey, series: number) {
  const jobId = callbackJobId(row, series)
  await dispatch('deliverCallback', { outboxId: row.id, series } satisfies DeliverCallbackData, {
    jobId,
  })
  await db
    .from('callback_outbox')
    .where({ id: row.id, series })
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
  row: CallbackRowKey,
  series: number
) {
  trx.after('commit', async () => {
    try {
      await enqueueDelivery(row, series)
    } catch (error) {
      logger.warn(
        { err: error, callback_outbox_id: row.id },
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
  const rows: Array<{
    id: string | number
    platform_order_id: string
    status: string
    series: number
    enqueued_at: Date | null
  }> = await db
    .from('callback_outbox')
    .where('state', 'pending')
    .orderBy('id')
    .limit(limit)
    .select('id', 'platform_order_id', 'status', 'series', 'enqueued_at')

  const callbacks = queue(jobDefinition('deliverCallback').queue)
  let enqueued = 0
  for (const row of rows) {
    const key = { id: Number(row.id), platformOrderId: row.platform_order_id, status: row.status }
    const jobId = callbackJobId(key, row.series)
    if (row.enqueued_at) {
      const state = await callbacks.getJobState(jobId)
      if (state === 'completed' || state === 'failed') {
        await callbacks.remove(jobId)
      } else if (state !== 'unknown') {
        continue // waiting, delayed, active, prioritized: it will run
      }
    }
    await enqueueDelivery(key, row.series)
    enqueued++
  }
  if (enqueued > 0) logger.info({ enqueued }, 'pending callbacks enqueued by the sweep')
  return { pending: rows.length, enqueued }
}
