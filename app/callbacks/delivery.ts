import { batchTransaction, statement, COMMIT } from '#core/sql_batch'
import logger from '@adonisjs/core/services/logger'
import { jobDefinition } from '#core/queue/registry'
import { postCallback, type PostResult } from '#callbacks/transport'
import { signCallbackBody } from '#callbacks/signing'
import { callbackSettings } from '#callbacks/settings'
import type { DeliverCallbackData } from '#callbacks/enqueue'
import { withDeadlockRetry } from '#core/db_retry'
import { recordCallbackDelivery } from '#metrics/job_metrics'

/**
 * Spec: up to 5 attempts per series, 60 seconds apart (the job's retry
 * policy, app/jobs/jobs.ts). Read when used: the job table is registered at boot.
 */
export const maxAttempts = () => jobDefinition('deliverCallback').attempts

export type DeliveryOutcome =
  | { result: 'delivered' | 'retry' | 'failed'; attempt: number; error: string | null }
  | { result: 'skipped'; reason: 'missing' | 'delivered' | 'failed' | 'superseded' | 'in-flight' }

export interface DeliveryJob {
  /** BullMQ job id, also the claim token. */
  id: string
  /** BullMQ will not run this job again if this attempt fails. */
  lastJobAttempt: boolean
}

/** The columns a delivery needs (body and signature are posted as stored). */
interface OutboxRow {
  /** BIGINT columns arrive as strings (bigNumberStrings). */
  id: string | number
  merchant_id: string | number
  platform_order_id: string
  notify_url: string
  body: string
  signature: string | null
  state: 'pending' | 'delivered' | 'failed'
  attempts: number
  series: number
}

/**
 * Claims the row for this job, then reads it: only a pending row of the job's
 * series, not being posted by another job (or whose lease has run out, e.g. a
 * crashed worker) is claimed. The claim makes duplicate jobs harmless: a
 * delivered or failed row, a row of a newer series, or a row in flight is
 * never posted by them. The read after the claim sees the row as claimed, or
 * tells why it was not. Plain SQL, no model, one round trip (a statement
 * batch): this runs for every callback.
 */
async function claim(data: DeliverCallbackData, job: DeliveryJob) {
  const now = new Date()
  // An attempt never outlives its timeout; the lease adds a little slack for the database writes.
  const leaseUntil = new Date(now.getTime() + callbackSettings().timeoutMs + 5_000)
  const [claimed, rows] = await withDeadlockRetry(() =>
    batchTransaction((trx) =>
      trx.run([
        statement(
          `UPDATE callback_outbox SET claimed_by = ?, claimed_until = ?
          WHERE id = ? AND series = ? AND state = 'pending'
            AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)`,
          [job.id, leaseUntil, data.outboxId, data.series, now, job.id]
        ),
        statement(
          `SELECT id, merchant_id, platform_order_id, notify_url, body, signature, state, attempts, series
           FROM callback_outbox WHERE id = ?`,
          [data.outboxId]
        ),
        COMMIT,
      ])
    )
  )
  return { claimed: Number(claimed.affectedRows) === 1, row: (rows as OutboxRow[])[0] }
}

function whySkipped(data: DeliverCallbackData, row: OutboxRow | undefined): DeliveryOutcome {
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
  const { claimed, row } = await claim(data, job)
  if (!claimed || !row) return whySkipped(data, row)
  const rowId = Number(row.id)
  const attempt = row.attempts + 1
  const startedAt = new Date()

  let result: PostResult
  if (row.attempts >= maxAttempts()) {
    // A replaced job for a row whose series is used up (its final write was lost).
    result = {
      ok: false,
      httpStatus: null,
      latencyMs: 0,
      responseExcerpt: null,
      error: `all ${maxAttempts()} attempts already made`,
      targetAddress: null,
      permanent: true,
    }
  } else {
    // Rows written before signatures were stored are signed with the current secret.
    const signature = row.signature ?? (await signCallbackBody(Number(row.merchant_id), row.body))
    result = await postCallback(row.notify_url, Buffer.from(row.body, 'utf8'), signature)
  }

  const state = result.ok
    ? 'delivered'
    : result.permanent || attempt >= maxAttempts() || job.lastJobAttempt
      ? 'failed'
      : 'pending'
  const finishedAt = new Date()

  // The attempt and the row's new state commit together, in one round trip.
  // The row first: its lock is then taken once, not shared by the attempt's
  // foreign key and upgraded.
  const [updated] = await withDeadlockRetry(() =>
    batchTransaction((trx) =>
      trx.run([
        statement(
          `UPDATE callback_outbox SET state = ?, attempts = ?, delivered_at = ?, last_attempt_at = ?,
            last_http_status = ?, last_error = ?, next_attempt_at = ?, claimed_by = NULL, claimed_until = NULL
          WHERE id = ? AND series = ? AND claimed_by = ?`,
          [
            state,
            Math.min(attempt, maxAttempts()),
            result.ok ? finishedAt : null,
            startedAt,
            result.httpStatus,
            result.error,
            state === 'pending'
              ? new Date(finishedAt.getTime() + jobDefinition('deliverCallback').backoff.delay)
              : null,
            rowId,
            row.series,
            job.id,
          ]
        ),
        ...(row.attempts < maxAttempts()
          ? [
              statement(
                `INSERT INTO callback_attempts (callback_outbox_id, series, attempt, job_id, target_address,
                  http_status, latency_ms, response_excerpt, error, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
                [
                  rowId,
                  row.series,
                  attempt,
                  job.id,
                  result.targetAddress,
                  result.httpStatus,
                  result.latencyMs,
                  result.responseExcerpt,
                  result.error,
                  startedAt,
                ]
              ),
            ]
          : []),
        COMMIT,
      ])
    )
  )
  const recorded = Number(updated.affectedRows) === 1

  const context = {
    callback_outbox_id: rowId,
    platform_order_id: row.platform_order_id,
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
  recordCallbackDelivery(state, attempt)

  return {
    result: state === 'delivered' ? 'delivered' : state === 'failed' ? 'failed' : 'retry',
    attempt,
    error: result.error,
  }
}
