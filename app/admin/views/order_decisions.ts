import PaymentOrder from '#payments/models/payment_order'
import ApprovalRequest, { pendingKeyOf } from '#approvals/models/approval_request'
import { FREEZE_REASON_CODES } from '#payments/actions/freeze_payment'
import { UNFREEZE_REASON_CODES } from '#payments/actions/unfreeze_payment'
import { MARK_PAID_REASON_CODES } from '#payments/actions/mark_payment_paid'
import { REVERSE_CREDIT_REASON_CODES } from '#reconciliation/actions/reverse_receivable'
import { operatorActionsFor } from '#payments/payment_state'
import { underlyingStatus } from '#payments/payment_rules'
import type { OrderPage } from '#admin/views/order_page'

export const codeOptions = (codes: readonly string[]) =>
  codes.map((code) => ({ value: code, label: code }))

/**
 * Which decisions the order page offers on a payment now (the actions check
 * again): what the state table allows (operatorActionsFor: freeze, unfreeze,
 * mark paid unless a request for it is pending), and taking back the credit
 * of a paid one whose claim is an open receivable (its bank line never came).
 */
export async function paymentDecisions(order: OrderPage) {
  const platformOrderId = order.platformOrderId
  const payment = await PaymentOrder.findByOrFail('platform_order_id', platformOrderId)
  const allowed = operatorActionsFor(payment)
  const underlying = underlyingStatus(payment)
  const pending = await ApprovalRequest.query()
    .where('pending_key', pendingKeyOf('mark_paid', { type: 'payment', id: platformOrderId }))
    .first()
  const claim = order.receipt?.claim ?? null
  const paid = underlying === 'unsettled_paid' || underlying === 'settled_paid'
  return {
    canFreeze: allowed.freeze,
    canUnfreeze: allowed.unfreeze,
    canMarkPaid: allowed.markPaid && !pending,
    canReverse: Boolean(claim?.open) && paid,
    /** Where a reversal takes the credit from, and whether the order is frozen by it. */
    reverseFrom: underlying === 'settled_paid' ? 'available' : 'unsettled',
    reverseCredit: claim ? { credited: claim.credited, fee: claim.fee } : null,
    frozenFrom: payment.status === 'freeze' ? payment.statusBeforeFreeze : null,
    pending: pending ? { id: pending.id, requested_by: pending.requestedByActor } : null,
    freezeCodes: codeOptions(FREEZE_REASON_CODES),
    unfreezeCodes: codeOptions(UNFREEZE_REASON_CODES),
    markPaidCodes: codeOptions(MARK_PAID_REASON_CODES),
    reverseCodes: codeOptions(REVERSE_CREDIT_REASON_CODES),
  }
}
