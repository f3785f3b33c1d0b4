import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import PaymentOrder from '#payments/models/payment_order'
import { transitionPayment } from '#payments/payment_state'
import { SYSTEM } from '#core/actor'
import { dispatch } from '#core/queue/queue_manager'

/**
 * Schedules the expiry of a new order as a delayed job (job id = order id, so
 * scheduling twice is harmless). If Redis is unreachable the order is still
 * valid: the periodic sweep expires it.
 */
export async function scheduleExpiry(order: PaymentOrder) {
  const delay = Math.max(0, order.expireAt.toMillis() - Date.now())
  try {
    await dispatch(
      'expirePayment',
      { paymentOrderId: order.id },
      { delay, jobId: `expire-${order.id}` }
    )
  } catch (error) {
    logger.warn(
      { err: error, platform_order_id: order.platformOrderId },
      'expiry job not scheduled; the sweep will expire the order'
    )
  }
}

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

/** Expires every overdue open order (the periodic safety net). */
export async function sweepExpiredPayments(now: DateTime = DateTime.utc(), batch = 500) {
  const due = await PaymentOrder.query()
    .where('status', 'open')
    .where('awaiting_review', false)
    .where('expire_at', '<=', now.toJSDate())
    .orderBy('expire_at')
    .limit(batch)
    .select('id')
  let expired = 0
  for (const { id } of due) if (await expirePayment(id, now)) expired++
  return expired
}
