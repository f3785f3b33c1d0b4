import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PaymentSlip from '#slips/models/payment_slip'
import { slipReviewSnapshot } from '#slips/slip_review'
import { clearAssignment } from '#review/assignments'
import { recordAudit } from '#core/audit'
import { SYSTEM, type Actor } from '#core/actor'

/** A decision on a slip: by an operator (reviewedBy), or by the statement (null). */
export interface SlipDecision {
  decision: 'approved' | 'rejected'
  reviewedBy: number | null
  at: DateTime
  reason: { code: string; comment: string }
}

/**
 * Writes a decision on a slip (locked by the caller, after its order) and
 * takes it out of the slip queue. Returns its review as it was before, for
 * the audit row the caller writes.
 */
export async function decideSlip(
  trx: TransactionClientContract,
  slip: PaymentSlip,
  decision: SlipDecision
) {
  const before = slipReviewSnapshot(slip)
  slip.merge({
    reviewedBy: decision.reviewedBy,
    reviewedAt: decision.at,
    reviewDecision: decision.decision,
    reviewReasonCode: decision.reason.code,
    reviewComment: decision.reason.comment,
  })
  await slip.useTransaction(trx).save()
  await clearAssignment(trx, 'slips', slip.id)
  return before
}

/**
 * A slip approved with its payment, by `actor`: the decision and its
 * `slip.review` audit row. Every approval goes through here: an operator's
 * (marking the payment paid) and the statement's (approveSlipsSeenOnStatement).
 */
export async function approveSlip(
  trx: TransactionClientContract,
  slip: PaymentSlip,
  approval: Omit<SlipDecision, 'decision'> & { actor: Actor; details: Record<string, unknown> }
) {
  const before = await decideSlip(trx, slip, { ...approval, decision: 'approved' })
  await recordAudit(trx, approval.actor, {
    action: 'slip.review',
    target: { type: 'slip', id: String(slip.id) },
    before,
    after: slipReviewSnapshot(slip),
    reason: approval.reason,
    details: approval.details,
  })
}

/**
 * The slips of orders statement lines just paid that no operator had
 * decided on are approved by the statement (no reviewer, reason
 * seen_on_statement) and leave the slip queue: the credit on the statement
 * is the evidence they were waiting for. The caller holds the orders locked;
 * the slips are locked here, after them.
 */
export async function approveSlipsSeenOnStatement(
  trx: TransactionClientContract,
  paid: Array<{ lineId: number; paymentOrderId: number; platformOrderId: string }>
) {
  if (paid.length === 0) return
  const byOrder = new Map(paid.map((item) => [item.paymentOrderId, item]))
  const slips = await PaymentSlip.query({ client: trx })
    .whereIn('payment_order_id', [...byOrder.keys()])
    .whereNull('review_decision')
    .orderBy('id')
    .forUpdate()
  for (const slip of slips) {
    const { lineId, platformOrderId } = byOrder.get(slip.paymentOrderId)!
    await approveSlip(trx, slip, {
      actor: SYSTEM,
      reviewedBy: null,
      at: DateTime.utc(),
      reason: { code: 'seen_on_statement', comment: `approved by statement line ${lineId}` },
      details: { platform_order_id: platformOrderId, statement_line_id: lineId },
    })
  }
}
