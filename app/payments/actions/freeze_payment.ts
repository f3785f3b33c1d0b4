import vine from '@vinejs/vine'
import type PaymentOrder from '#payments/models/payment_order'
import { canTransition, transitionPayment } from '#payments/payment_state'
import {
  decisionComment,
  lockPayment,
  paymentOrderId,
  paymentSnapshot,
} from '#payments/payment_rules'
import { clearAssignment } from '#review/assignments'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { AlreadyDone, byAndWhen, latestOrderEvent } from '#core/already_done'
import { inTransaction } from '#core/transaction'

/** Why an operator holds a payment for manual review. */
export const FREEZE_REASON_CODES = [
  'suspected_fraud',
  'customer_dispute',
  'merchant_request',
  'bank_inquiry',
  'investigation',
  'other',
] as const

export const freezePaymentValidator = vine.compile(
  vine.object({
    platform_order_id: vine.any().use(paymentOrderId()),
    reason_code: vine.enum(FREEZE_REASON_CODES),
    comment: decisionComment(),
  })
)

const MESSAGES = {
  'reason_code.required': `reason_code is required: one of ${FREEZE_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say why the payment is held',
}

/**
 * An operator freezes a payment for manual review (spec: any → freeze by
 * admin action): from open or unsettled_paid, through the transition
 * function, which keeps the state it came from in status_before_freeze. The
 * money stays where it is; a frozen order neither expires nor settles
 * (both jobs only take open / unsettled_paid orders). settled_paid and error
 * are final and cannot be frozen. A second submit finds it frozen and is
 * refused with a notice naming who froze it and when.
 */
export async function freezePayment(
  input: Record<string, unknown>,
  actor: Actor
): Promise<PaymentOrder> {
  const data = await validateInput(freezePaymentValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const order = await lockPayment(trx, data.platform_order_id)
    if (order.status === 'freeze') {
      // A double click or a colleague first: say who froze it and when, as a notice.
      const event = await latestOrderEvent(trx, 'payment', order.id, {
        to: 'freeze',
        notFrom: 'freeze',
      })
      throw new AlreadyDone(
        `${order.platformOrderId} was frozen${byAndWhen(event, actor)} (it was ${order.statusBeforeFreeze}); nothing more to do`
      )
    }
    if (!canTransition(order, 'freeze')) {
      throw ActionError.field(
        'platform_order_id',
        `${order.platformOrderId} is ${order.status}, a final status: it cannot be frozen`
      )
    }
    const before = paymentSnapshot(order)
    await transitionPayment(trx, order, {
      to: 'freeze',
      actor,
      reason: `frozen (${data.reason_code}): ${data.comment}`,
    })
    // A new hold starts unassigned in the frozen queue (a stale holder from an earlier hold goes).
    await clearAssignment(trx, 'frozen', order.platformOrderId)
    const diff = changedValues(before, paymentSnapshot(order))
    await recordAudit(trx, actor, {
      action: 'payment.freeze',
      target: { type: 'payment', id: order.platformOrderId },
      before: diff.before,
      after: diff.after,
      reason: { code: data.reason_code, comment: data.comment },
    })
    return order
  })
}
