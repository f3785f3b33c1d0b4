import vine from '@vinejs/vine'
import type PaymentOrder from '#payments/models/payment_order'
import { transitionPayment } from '#payments/payment_state'
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

/** Why a hold ends. */
export const UNFREEZE_REASON_CODES = [
  'review_cleared',
  'merchant_request',
  'bank_confirmed',
  'frozen_by_mistake',
  'other',
] as const

export const unfreezePaymentValidator = vine.compile(
  vine.object({
    platform_order_id: vine.any().use(paymentOrderId()),
    reason_code: vine.enum(UNFREEZE_REASON_CODES),
    comment: decisionComment(),
  })
)

const MESSAGES = {
  'reason_code.required': `reason_code is required: one of ${UNFREEZE_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say why the hold ends',
}

/**
 * An operator ends a freeze: the payment returns to the state it was frozen
 * in (status_before_freeze), through the transition function; nothing else
 * changes. Back to open, it expires as usual (at once, by the next sweep,
 * when its expire_datetime has passed and no slip awaits review); back to
 * unsettled_paid, it settles with the next run. A second submit finds it no
 * longer frozen and is refused.
 */
export async function unfreezePayment(
  input: Record<string, unknown>,
  actor: Actor
): Promise<PaymentOrder> {
  const data = await validateInput(unfreezePaymentValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const order = await lockPayment(trx, data.platform_order_id)
    if (order.status !== 'freeze' || !order.statusBeforeFreeze) {
      // How the freeze ended: an unfreeze is what was asked (a notice); marked paid is not.
      const left = await latestOrderEvent(trx, 'payment', order.id, {
        from: 'freeze',
        notTo: 'freeze',
      })
      const id = order.platformOrderId
      if (left && (left.reason ?? '').startsWith('unfrozen')) {
        throw new AlreadyDone(
          `${id} was unfrozen${byAndWhen(left, actor)} (it is ${order.status}); nothing more to do`
        )
      }
      const how = (left?.reason ?? '').startsWith('marked paid')
        ? 'it was marked paid'
        : `it went to ${left?.toStatus}`
      throw ActionError.general(
        left
          ? `${id} is no longer frozen: ${how}${byAndWhen(left, actor)}; it is ${order.status} and nothing was saved`
          : `${id} is not frozen (it is ${order.status}); nothing was saved`
      )
    }
    const before = paymentSnapshot(order)
    await transitionPayment(trx, order, {
      to: order.statusBeforeFreeze,
      actor,
      reason: `unfrozen (${data.reason_code}): ${data.comment}`,
    })
    await clearAssignment(trx, 'frozen', order.platformOrderId)
    const diff = changedValues(before, paymentSnapshot(order))
    await recordAudit(trx, actor, {
      action: 'payment.unfreeze',
      target: { type: 'payment', id: order.platformOrderId },
      before: diff.before,
      after: diff.after,
      reason: { code: data.reason_code, comment: data.comment },
    })
    return order
  })
}
