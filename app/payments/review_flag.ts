import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import { recordOrderEvent } from '#core/order_events'
import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'

export interface ReviewFlag {
  actor: Actor
  /** The order event's reason: what put the order under review. */
  reason: string
  /**
   * The audit row of the change, on the payment, when the cause has no audit
   * row of its own (a slip upload); its before and after are the flag.
   */
  audit?: { action: string; details: Record<string, unknown> }
}

/** An order event's reason when the order leaves review with it. */
export function leavingReview(reason: string) {
  return `${reason}; no longer under review`
}

/**
 * Sets a payment order's review flag (the order locked by the caller) and
 * writes the order and its event (same status, with the reason, which says
 * so when the order leaves review). The one place the flag is written, but
 * for the batch that pays orders (payment_state's transitionPayments).
 */
export async function setReviewFlag(
  trx: TransactionClientContract,
  order: PaymentOrder,
  underReview: boolean,
  change: { actor: Actor; reason: string }
) {
  const leaves = order.awaitingReview && !underReview
  order.awaitingReview = underReview
  await order.useTransaction(trx).save()
  await recordOrderEvent(trx, {
    orderType: 'payment',
    orderId: order.id,
    from: order.status,
    to: order.status,
    actor: change.actor,
    reason: leaves ? leavingReview(change.reason) : change.reason,
  })
}

/**
 * Puts a payment order (locked by the caller) under operator review: an open
 * order awaiting review does not expire until the review ends. Writes the
 * order, its event (same status, with the reason) and, when asked, the
 * audit row. Returns whether it was already under review.
 */
export async function flagForReview(
  trx: TransactionClientContract,
  order: PaymentOrder,
  flag: ReviewFlag
) {
  const wasAwaitingReview = order.awaitingReview
  await setReviewFlag(trx, order, true, flag)
  if (flag.audit) {
    await recordAudit(trx, flag.actor, {
      action: flag.audit.action,
      target: { type: 'payment', id: order.platformOrderId },
      before: { awaiting_review: wasAwaitingReview },
      after: { awaiting_review: true },
      details: flag.audit.details,
    })
  }
  return wasAwaitingReview
}
