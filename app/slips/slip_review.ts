import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PaymentSlip from '#slips/models/payment_slip'
import { ActionError } from '#core/validation'
import Operator from '#operators/models/operator'
import { AlreadyDone, atWhen } from '#core/already_done'
import type { Actor } from '#core/actor'
import type PaymentOrder from '#payments/models/payment_order'
import { underlyingStatus } from '#payments/payment_rules'

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

/**
 * Whether an operator can still decide on the slip from its page: no one
 * has yet, its order is open (frozen or not), and no request to mark the
 * order paid waits for a second operator.
 */
export function slipDecidable(
  slip: Pick<PaymentSlip, 'reviewDecision'>,
  order: Pick<PaymentOrder, 'status' | 'statusBeforeFreeze'>,
  markPaidPending: boolean
) {
  return !slip.reviewDecision && !markPaidPending && underlyingStatus(order) === 'open'
}

/**
 * A slip decision is made once; revisiting it is a new action, not a second
 * review. A second submit is told who decided and when ("by you" on a double
 * click); when the decision it asked for is the one made, as a notice.
 */
export async function assertUndecided(
  trx: TransactionClientContract,
  slip: PaymentSlip,
  wanted: { decision: 'approved' | 'rejected'; actor?: Actor }
) {
  if (slip.reviewDecision === null) return
  let who = 'the statement line that paid its order'
  if (slip.reviewedBy !== null) {
    if (wanted.actor?.operatorId === slip.reviewedBy) {
      who = 'you'
    } else {
      const reviewer = await Operator.find(slip.reviewedBy, { client: trx })
      who = reviewer?.email ?? `operator ${slip.reviewedBy}`
    }
  }
  const done = `slip ${slip.id} was ${slip.reviewDecision} by ${who} at ${atWhen(slip.reviewedAt)}`
  if (slip.reviewDecision === wanted.decision) {
    throw new AlreadyDone(`${done}; nothing more to do`)
  }
  throw ActionError.general(`${done}: a slip is decided once; nothing was saved`)
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
