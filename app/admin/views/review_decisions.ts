import type PaymentOrder from '#payments/models/payment_order'
import type { ReviewSlipResult } from '#slips/actions/review_slip'
import type { MarkPaidResult } from '#payments/actions/mark_payment_paid'

/** What the operator is told after deciding on a slip (reviewSlip's result). */
export function slipDecisionMessage(slipId: string, result: ReviewSlipResult) {
  if (result.decision === 'reject') {
    return `Slip ${slipId} rejected; the order is ${result.order.status}${result.order.awaitingReview ? ' and still awaits review' : ''}.`
  }
  if (result.outcome === 'approval_requested') {
    return `Above the platform’s four-eyes threshold: approval request #${result.request.id} opened; a second operator must approve it before the payment is marked paid.`
  }
  return `Slip ${slipId} approved: payment ${result.order.platformOrderId} is ${result.order.status}.`
}

/** What the order page's decisions say: what was done and the order's status now. */
export function orderDecisionMessage(
  decision: 'freeze' | 'unfreeze' | 'mark_paid',
  order: PaymentOrder,
  markPaid?: MarkPaidResult
) {
  const text =
    decision === 'freeze'
      ? 'frozen'
      : decision === 'unfreeze'
        ? 'unfrozen'
        : markPaid?.outcome === 'approval_requested'
          ? `above the platform’s four-eyes threshold: approval request #${markPaid.request.id} opened for a second operator`
          : 'marked paid'
  return `${order.platformOrderId}: ${text} (now ${order.status}).`
}
