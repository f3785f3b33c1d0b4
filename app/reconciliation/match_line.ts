import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type {
  ChainableContract,
  RawBuilderContract,
  ReferenceBuilderContract,
} from '@adonisjs/lucid/types/querybuilder'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import { transitionPayment } from '#payments/payment_state'
import PaymentSlip from '#slips/models/payment_slip'
import { slipReviewSnapshot } from '#slips/slip_review'
import { clearAssignment } from '#review/assignments'
import { recordAudit } from '#core/audit'
import { SYSTEM } from '#core/actor'
import { completePayout } from '#payouts/actions/complete_payout'
import { isPlatformOrderId } from '#core/order_ids'
import { withDeadlockRetry } from '#core/db_retry'

export type MatchResult = 'matched' | 'unmatched' | 'late' | 'skipped'

/** Statement times are minute-precise; slots are matched with this much slack. */
const SLACK_SECONDS = 60

/** The note of a line no order can claim, by direction. */
export const NO_ORDER_NOTE = {
  credit: 'no open order',
  debit: 'debit without a payout reference',
} as const

interface LineRow {
  id: number
  deposit_account_id: number
  line_at: Date
  direction: 'credit' | 'debit'
  amount: number
  reference: string | null
  status: string
}

/**
 * Matches one new statement line, in its own transaction with the line row
 * locked: a line is matched once even if two workers try, and the unique
 * (order_type, order_id) key stops an order from being settled by two lines.
 *
 * Credit lines pay the open payment order named by their reference, or else
 * the open order on this account holding the same transfer_amount whose slot
 * (order time to expiry, ±1 minute) covers the line's time. A payment for an
 * order that has already expired is "late"; anything else waits in
 * "unmatched" for an operator. Debit lines confirm bulk-file payouts named by
 * their reference; a credit naming a payout is that transfer coming back.
 */
export async function matchStatementLine(lineId: number): Promise<MatchResult> {
  // A deadlock rolls the whole attempt back; running it again is safe.
  return withDeadlockRetry(() => matchOnce(lineId))
}

/**
 * One transaction per line, the line row locked first: everything below sees
 * the line as it is and decides once.
 */
async function matchOnce(lineId: number): Promise<MatchResult> {
  return db.transaction(
    async (trx) => {
      const line = (await trx.from('statement_lines').where('id', lineId).forUpdate().first()) as
        LineRow | undefined
      if (!line || line.status !== 'new') return 'skipped'

      if (
        line.reference &&
        (isPlatformOrderId(line.reference, 'W') || isPlatformOrderId(line.reference, 'M'))
      ) {
        return settlePayoutLine(trx, line)
      }
      if (line.direction === 'debit') {
        return setLine(trx, line.id, 'unmatched', NO_ORDER_NOTE.debit)
      }
      return payPaymentLine(trx, line)
    },
    { isolationLevel: 'read committed' }
  )
}

async function payPaymentLine(trx: TransactionClientContract, line: LineRow): Promise<MatchResult> {
  const amount = Number(line.amount)
  const order = await findPaymentFor(trx, line)
  if (!order) {
    const expired = await findExpiredPaymentFor(trx, line)
    return setLine(
      trx,
      line.id,
      expired ? 'late' : 'unmatched',
      expired?.platformOrderId ?? NO_ORDER_NOTE.credit
    )
  }
  if (order.status === 'error') {
    // The customer paid an order that had already expired (error is final).
    return setLine(trx, line.id, 'late', order.platformOrderId)
  }
  if (order.status !== 'open') {
    return setLine(trx, line.id, 'unmatched', `${order.platformOrderId} is ${order.status}`)
  }
  if (order.transferAmount !== amount) {
    return setLine(
      trx,
      line.id,
      'unmatched',
      `${order.platformOrderId} expects ${order.transferAmount} satang`
    )
  }
  // Paid by the bank itself: nothing is left for an operator to review.
  const wasAwaitingReview = order.awaitingReview
  order.awaitingReview = false
  await transitionPayment(trx, order, {
    to: 'unsettled_paid',
    actor: SYSTEM,
    reason: wasAwaitingReview
      ? `statement line ${line.id}; no longer under review`
      : `statement line ${line.id}`,
    paidAt: DateTime.fromJSDate(new Date(line.line_at)),
  })
  await trx.from('statement_lines').where('id', line.id).update({
    status: 'matched',
    order_type: 'payment',
    order_id: order.id,
    matched_at: new Date(),
  })
  await closeSlipsPaidByStatement(trx, order, line.id)
  return 'matched'
}

/**
 * The slips of an order a statement line just paid that no operator had
 * decided on are closed as approved by the statement (no reviewer, reason
 * seen_on_statement), each with its audit row, and leave the slip queue:
 * the credit on the statement is the evidence they were waiting for.
 */
async function closeSlipsPaidByStatement(
  trx: TransactionClientContract,
  order: PaymentOrder,
  lineId: number
) {
  const slips = await PaymentSlip.query({ client: trx })
    .where('payment_order_id', order.id)
    .whereNull('review_decision')
    .forUpdate()
  const comment = `approved by statement line ${lineId}`
  for (const slip of slips) {
    const before = slipReviewSnapshot(slip)
    slip.merge({
      reviewedBy: null,
      reviewedAt: DateTime.utc(),
      reviewDecision: 'approved',
      reviewReasonCode: 'seen_on_statement',
      reviewComment: comment,
    })
    await slip.useTransaction(trx).save()
    await clearAssignment(trx, 'slips', slip.id)
    await recordAudit(trx, SYSTEM, {
      action: 'slip.review',
      target: { type: 'slip', id: String(slip.id) },
      before,
      after: slipReviewSnapshot(slip),
      reason: { code: 'seen_on_statement', comment },
      details: { platform_order_id: order.platformOrderId, statement_line_id: lineId },
    })
  }
}

async function findPaymentFor(trx: TransactionClientContract, line: LineRow) {
  if (line.reference) {
    const byReference = await PaymentOrder.query({ client: trx })
      .where('deposit_account_id', line.deposit_account_id)
      .where((query) =>
        query
          .where('payment_reference', line.reference!)
          .orWhere('platform_order_id', line.reference!)
      )
      .forUpdate()
      .first()
    if (byReference) return byReference
  }
  return holdingSlot(PaymentOrder.query({ client: trx }), lineValues(line))
    .forUpdate()
    .first()
}

async function findExpiredPaymentFor(trx: TransactionClientContract, line: LineRow) {
  return expiredBefore(PaymentOrder.query({ client: trx }), lineValues(line))
    .orderBy('order_at', 'desc')
    .first()
}

/**
 * What the rules below read from a statement line: its values when one line
 * is matched, its columns when an import's lines are triaged together; the
 * rules are written once for both.
 */
interface LineTerms {
  accountId: number | ReferenceBuilderContract
  amount: number | ReferenceBuilderContract
  /** The line's time minus and plus the slack. */
  earliest: Date | RawBuilderContract
  latest: Date | RawBuilderContract
}

function lineValues(line: LineRow): LineTerms {
  const at = new Date(line.line_at).getTime()
  return {
    accountId: line.deposit_account_id,
    amount: Number(line.amount),
    earliest: new Date(at - SLACK_SECONDS * 1000),
    latest: new Date(at + SLACK_SECONDS * 1000),
  }
}

function lineColumns(): LineTerms {
  return {
    accountId: db.ref('statement_lines.deposit_account_id'),
    amount: db.ref('statement_lines.amount'),
    earliest: db.raw(`statement_lines.line_at - INTERVAL ${SLACK_SECONDS} SECOND`),
    latest: db.raw(`statement_lines.line_at + INTERVAL ${SLACK_SECONDS} SECOND`),
  }
}

/**
 * The order on the line's account holding the line's amount as its
 * transfer_amount slot (unique per account: an open or frozen order), whose
 * slot covers the line's time: order_at − slack ≤ line time ≤ expire_at + slack.
 */
function holdingSlot<Query extends ChainableContract>(query: Query, line: LineTerms) {
  return query
    .where('payment_orders.deposit_account_id', line.accountId)
    .where('payment_orders.slot_amount', line.amount)
    .where('payment_orders.order_at', '<=', line.latest)
    .where('payment_orders.expire_at', '>=', line.earliest)
}

/**
 * Expired orders (status error, however long ago) on the line's account with
 * the line's amount as transfer_amount, created before the line (+ slack):
 * the line is a late payment for one of them.
 */
function expiredBefore<Query extends ChainableContract>(query: Query, line: LineTerms) {
  return query
    .where('payment_orders.deposit_account_id', line.accountId)
    .where('payment_orders.transfer_amount', line.amount)
    .where('payment_orders.status', 'error')
    .where('payment_orders.order_at', '<=', line.latest)
}

/**
 * Could an order claim this line? The matcher's own rules, as a condition on
 * `statement_lines` for judging many lines at once: a line with a reference
 * (decided one by one), or a credit that an order's slot covers or that pays
 * an expired order late. matchStatementLine marks every other line
 * unmatched with NO_ORDER_NOTE[direction]; an import gives them that verdict
 * in bulk.
 */
export function mayBeClaimed<Query extends ChainableContract>(query: Query) {
  const line = lineColumns()
  const orders = (sub: ChainableContract) => sub.from('payment_orders').select(db.raw('1'))
  return query.where((claim) =>
    claim
      .whereNotNull('statement_lines.reference')
      .orWhere((credit) =>
        credit
          .where('statement_lines.direction', 'credit')
          .where((order) =>
            order
              .whereExists((sub) => holdingSlot(orders(sub), line))
              .orWhereExists((sub) => expiredBefore(orders(sub), line))
          )
      )
  )
}

async function settlePayoutLine(
  trx: TransactionClientContract,
  line: LineRow
): Promise<MatchResult> {
  const order = await PayoutOrder.query({ client: trx })
    .where('platform_order_id', line.reference!)
    .forUpdate()
    .first()
  if (!order || order.connector !== 'bulk_file' || order.status !== 'pending') {
    return setLine(trx, line.id, 'unmatched', `${line.reference}: no pending bulk-file payout`)
  }
  const outcome =
    line.direction === 'debit'
      ? { success: true as const }
      : { success: false as const, reason: 'returned_by_bank' }
  await completePayout(order.id, outcome, {
    client: trx,
    reason: `statement line ${line.id}`,
  })
  await trx.from('statement_lines').where('id', line.id).update({
    status: 'matched',
    order_type: order.kind,
    order_id: order.id,
    matched_at: new Date(),
  })
  return 'matched'
}

async function setLine(
  trx: TransactionClientContract,
  lineId: number,
  status: 'unmatched' | 'late',
  note: string
) {
  await trx
    .from('statement_lines')
    .where('id', lineId)
    .update({ status, note: note.slice(0, 255) })
  return status
}
