import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import { transitionPayment } from '#payments/payment_state'
import { SYSTEM } from '#core/actor'
import { sweepDue } from '#core/sweep'
import { inTransaction } from '#core/transaction'

/**
 * open → error for an order past its expire_datetime, with its transfer_amount
 * slot released and a FAIL callback row, in one transaction. Idempotent: an
 * order that is no longer open, not yet due, or awaiting slip review is left
 * alone. Returns whether the order was expired by this call.
 */
export async function expirePayment(paymentOrderId: number, now: DateTime = DateTime.utc()) {
  return inTransaction(
    async (trx) => {
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
    },
    { idempotent: true }
  )
}

/**
 * Expires every overdue open order, oldest first, a batch at a time until
 * none is left (the job runs every EXPIRY_SWEEP_INTERVAL_MS; this is the only
 * expiry path; app/core/sweep.ts).
 */
export async function sweepExpiredPayments(now: DateTime = DateTime.utc(), batch = 500) {
  return sweepDue({
    due: (skip, size) =>
      PaymentOrder.query()
        .where('status', 'open')
        .where('awaiting_review', false)
        .where('expire_at', '<=', now.toJSDate())
        .if(skip.length > 0, (query) => query.whereNotIn('id', skip))
        .orderBy('expire_at')
        .limit(size)
        .select('id', 'platform_order_id'),
    apply: (id) => expirePayment(id, now),
    failure: 'order not expired',
    summary: (failed, done) => `${failed} overdue orders could not be expired (${done} were)`,
    batch,
  })
}
