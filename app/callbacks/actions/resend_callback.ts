import vine from '@vinejs/vine'
import CallbackOutbox from '#callbacks/models/callback_outbox'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { callbackJobId, enqueueAfterCommit } from '#callbacks/enqueue'
import { signCallbackBody } from '#callbacks/signing'
import { clearAssignment } from '#review/assignments'
import { inTransaction } from '#core/transaction'

/** Why callbacks are sent again (the back-office asks; the CLI may omit it). */
export const RESEND_REASON_CODES = [
  'merchant_endpoint_fixed',
  'merchant_request',
  'notify_url_changed',
  'after_incident',
  'other',
] as const

export const resendCallbackValidator = vine.compile(
  vine.object({
    /** The payment's, withdrawal's or settlement's id. */
    platform_order_id: vine.string().trim().maxLength(64),
    reason_code: vine.enum(RESEND_REASON_CODES).optional(),
    comment: vine.string().trim().maxLength(1000).optional(),
  })
)

export interface ResentCallback {
  outboxId: number
  status: string
  previousState: string
  series: number
  jobId: string
  /** The job was added after the commit; false: Redis was away, the sweep adds it. */
  queued: boolean
}

/**
 * Starts a new delivery series for every callback row of an order: the row
 * goes back to pending with 0 attempts and series + 1, so its job id is new
 * (BullMQ would ignore a re-add of the old id) and jobs of the old series stop
 * touching it. The body is unchanged; the signature is recomputed with the
 * merchant's current secret, which is the one the merchant verifies with
 * after a rotation. One audit row (each row's state before and after) in the
 * same transaction; the jobs are enqueued after the commit.
 */
export async function resendCallback(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(resendCallbackValidator, input)
  const platformOrderId = data.platform_order_id
  const resent = await inTransaction(async (trx) => {
    const rows = await CallbackOutbox.query({ client: trx })
      .where('platform_order_id', platformOrderId)
      .orderBy('id')
      .forUpdate()
    if (rows.length === 0) {
      throw ActionError.notFound(
        'platform_order_id',
        `No callback for ${platformOrderId} (unknown order, not final yet, or no notify_url)`
      )
    }
    const result: Array<Omit<ResentCallback, 'queued'>> = []
    for (const row of rows) {
      const series = row.series + 1
      const signature = await signCallbackBody(row.merchantId, row.body, trx)
      await trx.from('callback_outbox').where('id', row.id).update({
        state: 'pending',
        series,
        attempts: 0,
        signature,
        delivered_at: null,
        enqueued_at: null,
        job_id: null,
        claimed_by: null,
        claimed_until: null,
        next_attempt_at: null,
        last_error: null,
        last_http_status: null,
      })
      enqueueAfterCommit(trx, row, series)
      result.push({
        outboxId: row.id,
        status: row.status,
        previousState: row.state,
        series,
        jobId: callbackJobId(row, series),
      })
    }
    const snapshot = (state: (row: CallbackOutbox, index: number) => Record<string, unknown>) =>
      Object.fromEntries(rows.map((row, index) => [row.status, state(row, index)]))
    await recordAudit(trx, actor, {
      action: 'callback.resend',
      target: { type: rows[0].orderType, id: platformOrderId },
      before: snapshot((row) => ({
        state: row.state,
        series: row.series,
        attempts: row.attempts,
      })),
      after: snapshot((_row, index) => ({
        state: 'pending',
        series: result[index].series,
        attempts: 0,
      })),
      reason: { code: data.reason_code ?? null, comment: data.comment ?? null },
      details: { callback_outbox_ids: rows.map((row) => row.id) },
    })
    // Resent: the order leaves the failed-callbacks queue (a new failure brings it back).
    await clearAssignment(trx, 'callbacks', platformOrderId)
    return result
  })
  // Lucid runs the after-commit hooks inside commit(): each job is added, or Redis was away.
  const rows = await CallbackOutbox.findMany(resent.map((row) => row.outboxId))
  return resent.map((row) => ({
    ...row,
    queued: rows.find((entry) => entry.id === row.outboxId)?.jobId === row.jobId,
  }))
}
