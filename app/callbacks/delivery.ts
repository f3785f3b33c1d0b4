import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import CallbackOutbox from '#callbacks/models/callback_outbox'
import CallbackAttempt from '#callbacks/models/callback_attempt'
import { JOBS } from '#core/queue/jobs'
import { postCallback, type PostResult } from '#callbacks/transport'
import { signCallbackBody } from '#callbacks/signing'
import { callbackSettings } from '#callbacks/settings'
import type { DeliverCallbackData } from '#callbacks/enqueue'

/** Spec: up to 5 attempts per series, 60 seconds apart (the job's retry policy). */
export const MAX_ATTEMPTS = JOBS.deliverCallback.attempts

export type DeliveryOutcome =
  | { result: 'delivered' | 'retry' | 'failed'; attempt: number; error: string | null }
  | { result: 'skipped'; reason: 'missing' | 'delivered' | 'failed' | 'superseded' | 'in-flight' }

export interface DeliveryJob {
  /** BullMQ job id, also the claim token. */
  id: string
  /** BullMQ will not run this job again if this attempt fails. */
  lastJobAttempt: boolean
}

function affectedRows(result: unknown): number {
  return Number(Array.isArray(result) ? result[0] : result)
}

/**
 * Claims the row for this job: only a pending row of the job's series, not
 * being posted by another job (or whose lease has run out, e.g. a crashed
 * worker). The claim makes duplicate jobs harmless: a delivered or failed row,
 * a row of a newer series, or a row in flight is never posted by them.
 */
async function claim(data: DeliverCallbackData, job: DeliveryJob) {
  const now = new Date()
  // An attempt never outlives its timeout; the lease adds a little slack for the database writes.
  const leaseUntil = new Date(now.getTime() + callbackSettings().timeoutMs + 5_000)
  const result = await db
    .from('callback_outbox')
    .where('id', data.outboxId)
    .where('series', data.series)
    .where('state', 'pending')
    .where((query) =>
      query
        .whereNull('claimed_until')
        .orWhere('claimed_until', '<', now)
        .orWhere('claimed_by', job.id)
    )
    .update({ claimed_by: job.id, claimed_until: leaseUntil })
  return affectedRows(result) === 1
}

async function whySkipped(data: DeliverCallbackData): Promise<DeliveryOutcome> {
  const row = await CallbackOutbox.find(data.outboxId)
  if (!row) return { result: 'skipped', reason: 'missing' }
  if (row.series !== data.series) return { result: 'skipped', reason: 'superseded' }
  if (row.state !== 'pending') return { result: 'skipped', reason: row.state }
  return { result: 'skipped', reason: 'in-flight' }
}

/**
 * One delivery attempt of an outbox row (job callback.deliver): POST the
 * stored body with the stored signature, record the attempt, move the row to
 * delivered, failed (refused target, or the last attempt) or leave it pending
 * for the next retry. Idempotent: see claim().
 */
export async function deliverCallback(
  data: DeliverCallbackData,
  job: DeliveryJob
): Promise<DeliveryOutcome> {
  if (!(await claim(data, job))) return whySkipped(data)
  const row = await CallbackOutbox.findOrFail(data.outboxId)
  const attempt = row.attempts + 1
  const startedAt = DateTime.utc()

  let result: PostResult
  if (row.attempts >= MAX_ATTEMPTS) {
    // A replaced job for a row whose series is used up (its final write was lost).
    result = {
      ok: false,
      httpStatus: null,
      latencyMs: 0,
      responseExcerpt: null,
      error: `all ${MAX_ATTEMPTS} attempts already made`,
      targetAddress: null,
      permanent: true,
    }
  } else {
    // Rows written before signatures were stored are signed with the current secret.
    const signature = row.signature ?? (await signCallbackBody(row.merchantId, row.body))
    result = await postCallback(row.notifyUrl, Buffer.from(row.body, 'utf8'), signature)
  }

  const state = result.ok
    ? 'delivered'
    : result.permanent || attempt >= MAX_ATTEMPTS || job.lastJobAttempt
      ? 'failed'
      : 'pending'
  const finishedAt = new Date()

  const recorded = await db.transaction(async (trx) => {
    if (row.attempts < MAX_ATTEMPTS) {
      await CallbackAttempt.create(
        {
          callbackOutboxId: row.id,
          series: row.series,
          attempt,
          jobId: job.id,
          targetAddress: result.targetAddress,
          httpStatus: result.httpStatus,
          latencyMs: result.latencyMs,
          responseExcerpt: result.responseExcerpt,
          error: result.error,
          createdAt: startedAt,
        },
        { client: trx }
      )
    }
    const update = await trx
      .from('callback_outbox')
      .where({ id: row.id, series: row.series, claimed_by: job.id })
      .update({
        state,
        attempts: Math.min(attempt, MAX_ATTEMPTS),
        delivered_at: result.ok ? finishedAt : null,
        last_attempt_at: startedAt.toJSDate(),
        last_http_status: result.httpStatus,
        last_error: result.error,
        next_attempt_at:
          state === 'pending'
            ? new Date(finishedAt.getTime() + JOBS.deliverCallback.backoff.delay)
            : null,
        claimed_by: null,
        claimed_until: null,
      })
    return affectedRows(update) === 1
  })

  const context = {
    callback_outbox_id: row.id,
    platform_order_id: row.platformOrderId,
    series: row.series,
    attempt,
    http_status: result.httpStatus,
    latency_ms: result.latencyMs,
  }
  if (!recorded) {
    // A resend started a new series meanwhile: this result belongs to the old one.
    logger.info(context, 'callback attempt recorded for a superseded series')
    return { result: 'skipped', reason: 'superseded' }
  }
  if (state === 'delivered') logger.info(context, 'callback delivered')
  else logger.warn({ ...context, error: result.error, state }, 'callback attempt failed')

  return {
    result: state === 'delivered' ? 'delivered' : state === 'failed' ? 'failed' : 'retry',
    attempt,
    error: result.error,
  }
}
