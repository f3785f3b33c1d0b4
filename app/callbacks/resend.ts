import db from '@adonisjs/lucid/services/db'
import CallbackOutbox from '#models/callback_outbox'
import { recordAudit } from '#services/audit'
import { callbackJobId, enqueueAfterCommit } from '#callbacks/enqueue'
import { signCallbackBody } from '#callbacks/signing'

export interface ResentCallback {
  outboxId: number
  status: string
  previousState: string
  series: number
  jobId: string
}

/**
 * Starts a new delivery series for every callback row of an order: the row
 * goes back to pending with 0 attempts and series + 1, so its job id is new
 * (BullMQ would ignore a re-add of the old id) and jobs of the old series stop
 * touching it. The body is unchanged; the signature is recomputed with the
 * merchant's current secret, which is the one the merchant verifies with
 * after a rotation. Audited in the same transaction; the job is enqueued after
 * the commit.
 */
export async function resendCallbacks(platformOrderId: string, actor: string) {
  return db.transaction(async (trx) => {
    const rows = await CallbackOutbox.query({ client: trx })
      .where('platform_order_id', platformOrderId)
      .orderBy('id')
      .forUpdate()
    const resent: ResentCallback[] = []
    for (const row of rows) {
      const previousState = row.state
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
      const jobId = callbackJobId(row.id, series)
      await recordAudit(
        {
          actor,
          action: 'callback.resend',
          subjectType: row.orderType,
          subjectId: row.platformOrderId,
          details: {
            callback_outbox_id: row.id,
            status: row.status,
            previous_state: previousState,
            previous_attempts: row.attempts,
            series,
            job_id: jobId,
          },
        },
        trx
      )
      enqueueAfterCommit(trx, row.id, series)
      resent.push({ outboxId: row.id, status: row.status, previousState, series, jobId })
    }
    return resent
  })
}
