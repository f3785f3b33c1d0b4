import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PaymentSlip from '#slips/models/payment_slip'
import { ActionError } from '#core/validation'

/**
 * Whether the order still has a slip no operator has decided on: such an
 * order stays flagged for review (and does not expire) until every slip is
 * decided or the order is paid.
 */
export async function hasUndecidedSlips(trx: TransactionClientContract, paymentOrderId: number) {
  const slip = await PaymentSlip.query({ client: trx })
    .where('payment_order_id', paymentOrderId)
    .whereNull('review_decision')
    .select('id')
    .first()
  return slip !== null
}

/** The operator who last decided on a slip of the order, if any. */
export async function latestSlipReviewer(trx: TransactionClientContract, paymentOrderId: number) {
  const slip = await PaymentSlip.query({ client: trx })
    .where('payment_order_id', paymentOrderId)
    .whereNotNull('reviewed_by')
    .orderBy('reviewed_at', 'desc')
    .orderBy('id', 'desc')
    .first()
  return slip?.reviewedBy ?? null
}

/** The slip by id, locked (after its order: orders are always locked first). */
export async function lockSlip(trx: TransactionClientContract, slipId: number, field = 'slip_id') {
  const slip = await PaymentSlip.query({ client: trx }).where('id', slipId).forUpdate().first()
  if (!slip) throw ActionError.notFound(field, `no slip ${slipId}`)
  return slip
}

/** A slip decision is made once; revisiting it is a new action, not a second review. */
export function assertUndecided(slip: PaymentSlip, field = 'slip_id') {
  if (slip.reviewDecision !== null) {
    throw ActionError.field(
      field,
      `slip ${slip.id} was already ${slip.reviewDecision}` +
        (slip.reviewedAt ? ` at ${slip.reviewedAt.toISO()}` : '')
    )
  }
}

/** The slip's review as the audit log shows it. */
export function slipReviewSnapshot(slip: PaymentSlip) {
  return {
    review_decision: slip.reviewDecision,
    reviewed_by: slip.reviewedBy,
    reviewed_at: slip.reviewedAt?.toISO() ?? null,
    review_reason_code: slip.reviewReasonCode,
  }
}
