import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import PaymentOrder from '#payments/models/payment_order'
import { transitionPayment } from '#payments/payment_state'
import { SYSTEM } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

/**
 * open → error for an order past its expire_datetime, with its transfer_amount
 * slot released and a FAIL callback row, in one transaction. Idempotent: an
 * order that is no longer open, not yet due, or awaiting slip review is left
 * alone. Returns whether the order was expired by this call.
 */
export async function expirePayment(paymentOrderId: number, now: DateTime = DateTime.utc()) {
  return db.transaction(async (trx) => {
    const order = await PaymentOrder.query({ client: trx })
      .where('id', paymentOrderId)
      .forUpdate()
      .first()
    if (!order || order.status !== 'open' || order.awaitingReview) return false
    if (order.expireAt > now) return false

    await transitionPayment(trx, order, {
      to: 'error',
      actor: SYSTEM,
      reason: 'expired',
      errorReason: 'expired',
      now,
    })
    return true
  })
}

/** Orders expired at once by the sweep: each in its own short transaction. */
const SWEEP_LANES = 4

/**
 * Expires every overdue open order, oldest first, a batch at a time until
 * none is left (the job runs every EXPIRY_SWEEP_INTERVAL_MS; this is the only
 * expiry path). Orders are independent: one that fails is logged and left for
 * the next run, the others are expired; the run then fails so that it shows.
 */
export async function sweepExpiredPayments(now: DateTime = DateTime.utc(), batch = 500) {
  let expired = 0
  // Orders that failed in this run are not tried again until the next one.
  const failed = new Set<number>()
  for (;;) {
    const due = await PaymentOrder.query()
      .where('status', 'open')
      .where('awaiting_review', false)
      .where('expire_at', '<=', now.toJSDate())
      .if(failed.size > 0, (query) => query.whereNotIn('id', [...failed]))
      .orderBy('expire_at')
      .limit(batch)
      .select('id', 'platform_order_id')
    const queue = [...due]
    let expiredNow = 0
    const failedBefore = failed.size
    const lane = async () => {
      for (let order = queue.shift(); order; order = queue.shift()) {
        try {
          if (await withDeadlockRetry(() => expirePayment(order.id, now))) expiredNow++
        } catch (error) {
          failed.add(order.id)
          logger.error(
            { err: error, platform_order_id: order.platformOrderId },
            'order not expired; the next sweep tries again'
          )
        }
      }
    }
    await Promise.all(Array.from({ length: SWEEP_LANES }, lane))
    expired += expiredNow
    // A short batch was the last. A full one where nothing changed and nothing
    // failed (another sweep got there first) would only repeat itself; failed
    // orders are left out of the next batches, so the loop always moves on.
    if (due.length < batch || (expiredNow === 0 && failedBefore === failed.size)) break
  }
  if (failed.size > 0) {
    throw new Error(`${failed.size} overdue orders could not be expired (${expired} were)`)
  }
  return expired
}
