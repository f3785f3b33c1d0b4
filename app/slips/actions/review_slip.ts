import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import {
  AMOUNT_POLICIES,
  markPaymentPaid,
  MARK_PAID_REASON_CODES,
  type MarkPaidResult,
} from '#payments/actions/mark_payment_paid'
import { transitionPayment } from '#payments/payment_state'
import { decisionComment, paymentSnapshot } from '#payments/payment_rules'
import { livePendingRequest, pendingRefusal } from '#approvals/approval_requests'
import {
  assertUndecided,
  hasUndecidedSlips,
  lockSlip,
  slipReviewSnapshot,
} from '#slips/slip_review'
import { decideSlip } from '#slips/slip_decision'
import { setReviewFlag } from '#payments/review_flag'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** Why a slip proves nothing. */
export const SLIP_REJECT_REASON_CODES = [
  'no_matching_credit',
  'wrong_amount',
  'wrong_receiver',
  'forged_or_edited',
  'reused_slip',
  'unreadable',
  'other',
] as const

/** Reason codes by decision: approving marks the payment paid, so it uses that action's codes. */
export const SLIP_REVIEW_REASON_CODES = {
  approve: MARK_PAID_REASON_CODES,
  reject: SLIP_REJECT_REASON_CODES,
} as const

/** The reason code must be one of the decision's own (approve: mark paid's; reject: the slip's). */
const reasonCodeOfDecision = vine.createRule((value, _options, field) => {
  if (typeof value !== 'string') return
  const decision = (field.parent as { decision?: unknown } | undefined)?.decision
  if (decision !== 'approve' && decision !== 'reject') return
  const codes: readonly string[] = SLIP_REVIEW_REASON_CODES[decision]
  if (!codes.includes(value)) {
    field.report(
      `reason_code for ${decision} must be one of: ${codes.join(', ')}`,
      'reasonCodeOfDecision',
      field
    )
  }
})

export const reviewSlipValidator = vine.compile(
  vine.object({
    slip_id: vine.number().withoutDecimals().min(1),
    decision: vine.enum(['approve', 'reject'] as const),
    reason_code: vine.string().trim().use(reasonCodeOfDecision()),
    comment: decisionComment(),
    /** Approving a transfer of another amount than transfer_amount (mark paid's amount_policy). */
    amount_policy: vine.enum(AMOUNT_POLICIES).optional(),
  })
)

const MESSAGES = {
  'slip_id.number': 'slip_id must be a slip number',
  'decision.required': 'decision is required: approve or reject',
  'decision.enum': 'decision must be approve or reject',
  'comment.required': 'comment is required: say what the slip shows',
}

export type ReviewSlipResult =
  | ({ decision: 'approve' } & MarkPaidResult)
  | { decision: 'reject'; slip: PaymentSlip; order: PaymentOrder }

/**
 * An operator decides on a flagged slip.
 *
 * - approve: marks the slip's payment successful (markPaymentPaid with the
 *   slip: open → unsettled_paid, ledger, PAID callback; the slip approved by
 *   the operator; the slip's transfer claimed: its statement line, or a
 *   receivable its line clears), or, above the platform's threshold, opens
 *   the approval request that will.
 * - reject: the slip is marked rejected by the operator. When no other slip
 *   of the order waits for a decision, the order is no longer under review:
 *   plain open again (and expires as usual), or, already past its
 *   expire_datetime, error with a FAIL callback (open → error, spec:
 *   "expiry or rejection"). An order that is no longer open keeps its
 *   status. Refused while a mark-paid request for the order is pending.
 *
 * A slip is decided once: a second submit is refused, saying who decided
 * and when.
 */
export async function reviewSlip(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ReviewSlipResult> {
  const data = await validateInput(reviewSlipValidator, input, MESSAGES)
  const found = await PaymentSlip.find(data.slip_id)
  if (!found) throw ActionError.notFound('slip_id', `no slip ${data.slip_id}`)
  const order = await PaymentOrder.findOrFail(found.paymentOrderId)

  if (data.decision === 'approve') {
    const result = await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        slip_id: data.slip_id,
        reason_code: data.reason_code,
        comment: data.comment,
        amount_policy: data.amount_policy,
      },
      actor
    )
    return { decision: 'approve', ...result }
  }
  return rejectSlip(order.id, data.slip_id, data.reason_code, data.comment, actor)
}

function rejectSlip(
  orderId: number,
  slipId: number,
  reasonCode: string,
  comment: string,
  actor: Actor
) {
  return inTransaction(async (trx) => {
    // The order first, then the slip: the lock order of every payment decision.
    const order = await PaymentOrder.query({ client: trx })
      .where('id', orderId)
      .forUpdate()
      .firstOrFail()
    const slip = await lockSlip(trx, slipId)
    await assertUndecided(trx, slip, { decision: 'rejected', actor })
    const live = await livePendingRequest(trx, 'mark_paid', {
      type: 'payment',
      id: order.platformOrderId,
    })
    if (live) throw pendingRefusal(live, 'slip_id')

    const now = DateTime.utc()
    const orderBefore = paymentSnapshot(order)
    const slipBefore = await decideSlip(trx, slip, {
      decision: 'rejected',
      reviewedBy: actor.operatorId ?? null,
      at: now,
      reason: { code: reasonCode, comment },
    })

    const stillUnderReview = await hasUndecidedSlips(trx, order.id)
    const why = `slip ${slip.id} rejected (${reasonCode}): ${comment}`
    if (order.status === 'open' && !stillUnderReview && order.expireAt <= now) {
      order.awaitingReview = false
      await transitionPayment(trx, order, {
        to: 'error',
        actor,
        reason: why,
        errorReason: 'rejected',
        now,
      })
    } else {
      // A paid or failed order keeps its flag as it is: only a waiting one leaves review.
      const waiting = order.status === 'open' || order.status === 'freeze'
      await setReviewFlag(trx, order, waiting ? stillUnderReview : order.awaitingReview, {
        actor,
        reason: why,
      })
    }

    const orderDiff = changedValues(orderBefore, paymentSnapshot(order))
    await recordAudit(trx, actor, {
      action: 'slip.review',
      target: { type: 'slip', id: String(slip.id) },
      before: slipBefore,
      after: slipReviewSnapshot(slip),
      reason: { code: reasonCode, comment },
      details: {
        platform_order_id: order.platformOrderId,
        order_before: orderDiff.before,
        order_after: orderDiff.after,
      },
    })
    return { decision: 'reject' as const, slip, order }
  })
}
