import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import type PaymentSlip from '#slips/models/payment_slip'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import type ApprovalRequest from '#approvals/models/approval_request'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { decideWithFourEyes } from '#approvals/four_eyes_decision'
import { transitionPayment } from '#payments/payment_state'
import { assertNotFrozenForApproval } from '#payments/frozen_orders'
import { flagForReview, setReviewFlag } from '#payments/review_flag'
import { alreadyPaidRefusal } from '#payments/decision_truth'
import {
  decisionComment,
  lockPayment,
  paymentOrderId,
  paymentSnapshot,
  underlyingStatus,
} from '#payments/payment_rules'
import {
  assertUndecided,
  hasUndecidedSlips,
  latestSlipReviewer,
  lockSlip,
} from '#slips/slip_review'
import { approveSlip } from '#slips/slip_decision'
import { clearAssignment } from '#review/assignments'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import { paymentCredit } from '#ledger/recipes'
import {
  findPaymentReceipt,
  receivedAmount,
  slipEvidence,
  type PaymentReceipt,
} from '#reconciliation/payment_receipts'
import { insertClaim, type ClaimPath } from '#reconciliation/receipts'
import { writeDecision } from '#reconciliation/line_decision'

/** Why an operator says the customer paid. */
export const MARK_PAID_REASON_CODES = [
  'slip_verified',
  'seen_on_statement',
  'bank_confirmed',
  'provider_confirmed',
  'other',
] as const

/**
 * When the bank received another amount than transfer_amount: credit what
 * was received (less the fee on it). The other way out is to reject the
 * slip and return the line to the payer (docs/decisions.md).
 */
export const AMOUNT_POLICIES = ['credit_received'] as const

const schema = vine.object({
  platform_order_id: vine.any().use(paymentOrderId()),
  /** The slip the decision rests on: it is marked approved with the order. */
  slip_id: vine.number().withoutDecimals().min(1).optional(),
  reason_code: vine.enum(MARK_PAID_REASON_CODES),
  comment: decisionComment(),
  amount_policy: vine.enum(AMOUNT_POLICIES).optional(),
})

export const markPaymentPaidValidator = vine.compile(schema)
export type MarkPaidData = Infer<typeof schema>

export const MARK_PAID_MESSAGES = {
  'reason_code.required': `reason_code is required: one of ${MARK_PAID_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say what shows that the customer paid',
  'slip_id.number': 'slip_id must be a slip number',
  'amount_policy.enum': `amount_policy must be ${AMOUNT_POLICIES.join(' or ')}`,
}

export type MarkPaidPrepared = Awaited<ReturnType<typeof prepareMarkPaid>>

export type MarkPaidResult =
  | { outcome: 'paid'; order: PaymentOrder; request: null }
  | { outcome: 'approval_requested'; order: PaymentOrder; request: ApprovalRequest }

/**
 * An operator marks an open payment successful: open → unsettled_paid
 * through the transition function, as a matched statement line does (the
 * payment_paid posting, the PAID callback row, the order event), with a
 * reason code and a comment; the order no longer awaits review. With
 * `slip_id` the slip is marked approved by the operator.
 *
 * Above the platform's four_eyes_threshold nothing is paid: an approval
 * request is opened instead (outcome "approval_requested") and the order
 * waits for it without expiring. A second submit finds the order paid or
 * the request pending and is refused.
 *
 * A frozen order that was open may be marked paid (the state table allows
 * freeze → unsettled_paid for it); error is final, a late payment is
 * credited instead. Approving a request to mark it paid is another matter:
 * it is refused while the order is frozen (the request stays pending, see
 * #payments/frozen_orders), whenever the request was opened.
 */
export async function markPaymentPaid(
  input: Record<string, unknown>,
  actor: Actor
): Promise<MarkPaidResult> {
  const data = await validateInput(markPaymentPaidValidator, input, MARK_PAID_MESSAGES)
  const { prepared, request } = await decideWithFourEyes({
    action: 'payment.mark_paid',
    data,
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    field: 'platform_order_id',
    prepare: async (trx) => {
      const locked = await prepareMarkPaid(trx, data, actor)
      const threshold = locked.platform.fourEyesThreshold
      // The money that moves, not the order's amount (it may credit what was received).
      return { prepared: locked, threshold, amount: amountCredited(locked.order, locked.receipt) }
    },
    run: (trx, locked) => runMarkPaid(trx, locked, data, { actor, request: null }),
  })
  return request
    ? { outcome: 'approval_requested', order: prepared.order, request }
    : { outcome: 'paid', order: prepared.order, request: null }
}

/**
 * Locks the order (and the slip), checks both allow the decision now. The
 * reviewer of record, who may not approve: `actor` when a slip is named (they
 * review it now), otherwise whoever last decided on a slip of this order
 * (e.g. rejected it before the credit was found).
 */
export async function prepareMarkPaid(
  trx: TransactionClientContract,
  data: MarkPaidData,
  actor?: Actor
) {
  const order = await lockPayment(trx, data.platform_order_id)
  let slip: PaymentSlip | null = null
  if (data.slip_id !== undefined) {
    slip = await lockSlip(trx, data.slip_id)
    if (slip.paymentOrderId !== order.id) {
      throw ActionError.field('slip_id', `slip ${slip.id} belongs to another payment order`)
    }
    // First: a second submit of the same slip decision says so.
    await assertUndecided(trx, slip, { decision: 'approved', actor })
  }
  await assertPayable(trx, order, actor)
  const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
  const platform = await Platform.findOrFail(merchant.platformId, { client: trx })
  // The bank's money for it: its line, or a receivable its line will clear.
  const receipt = await findPaymentReceipt(trx, order, slip ? slipEvidence(slip) : null)
  assertAmountPolicy(order, receipt, data, merchant.paymentFeeRateBps)
  const target: ApprovalTarget = {
    type: 'payment',
    id: order.platformOrderId,
    amount: order.amount,
    reviewedBy: slip ? (actor?.operatorId ?? null) : await latestSlipReviewer(trx, order.id),
  }
  return { order, slip, platform, target, receipt, claimPath: undefined as ClaimPath | undefined }
}

/**
 * What marking the order paid credits before the fee, which the four-eyes
 * threshold judges: the order's amount, or what the bank received when that
 * is another amount (credit what was received).
 */
function amountCredited(order: PaymentOrder, receipt: PaymentReceipt) {
  const received = receivedAmount(receipt)
  return received === order.transferAmount ? order.amount : received
}

/**
 * The bank received (or a slip source says it sent) another amount than
 * transfer_amount: paying the order is an explicit decision to credit what
 * was received, never more.
 */
function assertAmountPolicy(
  order: PaymentOrder,
  receipt: PaymentReceipt,
  data: MarkPaidData,
  feeRateBps: number
) {
  const received = receivedAmount(receipt)
  if (received === order.transferAmount || data.amount_policy === 'credit_received') return
  const source =
    receipt.kind === 'line'
      ? `statement line #${receipt.line.id} received ${formatThb(received)} THB`
      : `the slip's transfer is ${formatThb(received)} THB`
  const credit = paymentCredit(order, received, feeRateBps)
  throw ActionError.field(
    'amount_policy',
    `${source}, not the transfer_amount ${formatThb(order.transferAmount)} THB: ` +
      `credit what was received (${formatThb(credit.credited)} THB after the fee of ${formatThb(credit.fee)}), ` +
      `or reject the slip and return the money to the payer`
  )
}

async function assertPayable(trx: TransactionClientContract, order: PaymentOrder, actor?: Actor) {
  const underlying = underlyingStatus(order)
  if (underlying === 'open') return
  const id = order.platformOrderId
  let why: string
  if (order.status === 'freeze') {
    why = `${id} was frozen after it was paid; unfreeze it instead`
  } else if (order.status === 'error') {
    why = `${id} is error (${order.errorReason ?? 'closed'}), a final status: a late payment is credited to the merchant, not marked paid`
  } else {
    // Already paid: what was asked holds; say by whom and when.
    throw await alreadyPaidRefusal(trx, order, actor)
  }
  throw ActionError.field('platform_order_id', why)
}

/**
 * The change itself, in the caller's transaction, after prepareMarkPaid:
 * the transition (ledger, PAID callback, event), the slip's review, the
 * audit rows. On approval `context.request` is the approved request and the
 * slip's reviewer is the one who asked.
 */
export async function runMarkPaid(
  trx: TransactionClientContract,
  prepared: MarkPaidPrepared,
  data: MarkPaidData,
  context: RunContext
) {
  const { order, slip, receipt } = prepared
  const { actor, request } = context
  const now = DateTime.utc()
  const before = paymentSnapshot(order)
  order.awaitingReview = false
  const received = receivedAmount(receipt)
  const paid = await transitionPayment(trx, order, {
    to: 'unsettled_paid',
    actor,
    reason: [
      `marked paid (${data.reason_code})`,
      slip ? `slip ${slip.id}` : null,
      request ? `approval request #${request.id}` : null,
    ]
      .filter(Boolean)
      .join(', ')
      .concat(`: ${data.comment}`),
    paidAt: now,
    now,
    receipt: { source: receipt.kind === 'line' ? 'clearing' : 'receivable', received },
  })
  const path: ClaimPath = prepared.claimPath ?? (slip ? 'slip_approval' : 'mark_paid')
  // The receipt claimed (or the receivable opened): a second claim on the
  // line, the slip's transfer or the order fails on its unique key.
  await insertClaim(trx, {
    depositAccountId: order.depositAccountId,
    statementLineId: receipt.kind === 'line' ? receipt.line.id : null,
    path,
    actor,
    transRef: slip?.transRef ?? null,
    paymentOrderId: order.id,
    merchantId: order.merchantId,
    amountPolicy: received === order.transferAmount ? 'exact' : 'credit_received',
    expectedAmount: received,
    credited: paid.credited ?? 0,
    fee: order.fee ?? 0,
    expectedFrom: receipt.kind === 'receivable' ? receipt.expectedFrom : null,
    expectedTo: receipt.kind === 'receivable' ? receipt.expectedTo : null,
    slipId: slip?.id ?? null,
    approvalRequestId: request?.id ?? null,
    ledgerTransactionId: paid.paidPostingId,
  })
  if (receipt.kind === 'line' && path !== 'attach') {
    // The line found is this payment's: it is matched to the order and leaves the lines queue.
    await writeDecision(trx, receipt.line, {
      decision: 'attached',
      actor,
      reason: { code: data.reason_code, comment: data.comment },
      paymentOrderId: order.id,
      merchantId: order.merchantId,
      extra: {
        status: 'matched',
        order_type: 'payment',
        order_id: order.id,
        matched_at: new Date(),
      },
      details: {
        platform_order_id: order.platformOrderId,
        claimed_by: slip ? `slip ${slip.id}` : 'mark paid',
        found_by: receipt.how,
        amount: receipt.line.amount,
        credited: paid.credited,
        fee: order.fee,
      },
      requestId: request?.id ?? null,
    })
  }
  // Decided: a frozen order marked paid leaves the frozen queue, its slip the slip queue.
  await clearAssignment(trx, 'frozen', order.platformOrderId)
  const diff = changedValues(before, paymentSnapshot(order))
  await recordAudit(trx, actor, {
    action: 'payment.mark_paid',
    target: { type: 'payment', id: order.platformOrderId },
    before: diff.before,
    after: diff.after,
    reason: { code: data.reason_code, comment: data.comment },
    details: {
      amount: order.amount,
      transfer_amount: order.transferAmount,
      received,
      credited: paid.credited,
      statement_line_id: receipt.kind === 'line' ? receipt.line.id : null,
      receivable: receipt.kind === 'receivable',
      slip_id: slip?.id ?? null,
      approval_request_id: request?.id ?? null,
      requested_by: request?.requestedByActor ?? null,
    },
  })
  if (slip) {
    await approveSlip(trx, slip, {
      actor,
      reviewedBy: request ? request.reviewedBy : (actor.operatorId ?? null),
      at: now,
      reason: { code: data.reason_code, comment: data.comment },
      details: {
        platform_order_id: order.platformOrderId,
        approval_request_id: request?.id ?? null,
      },
    })
  }
  return {
    platform_order_id: order.platformOrderId,
    status: order.status,
    fee: order.fee,
    credited: paid.credited,
    received,
    statement_line_id: receipt.kind === 'line' ? receipt.line.id : null,
    receivable: receipt.kind === 'receivable',
    paid_at: order.paidAt?.toISO() ?? null,
    slip_id: slip?.id ?? null,
  }
}

/** While a mark-paid request waits, the order is under review: it does not expire. */
export async function holdForReview(
  trx: TransactionClientContract,
  order: PaymentOrder,
  request: ApprovalRequest
) {
  // Read again: closing an expired request of this order may just have changed the row.
  const current = await lockPayment(trx, order.platformOrderId)
  order.awaitingReview = true
  if (current.awaitingReview) return
  await flagForReview(trx, current, {
    actor: { name: request.requestedByActor, operatorId: request.requestedBy },
    reason: `approval request #${request.id}: marking paid waits for a second operator`,
  })
}

/**
 * A mark-paid request rejected or expired: the order stays under review only
 * if a slip still waits for a decision; otherwise it is plain open again and
 * expires as usual.
 */
export async function releaseReviewHold(
  trx: TransactionClientContract,
  data: MarkPaidData,
  request: ApprovalRequest
) {
  const order = await lockPayment(trx, data.platform_order_id)
  if (underlyingStatus(order) !== 'open' || !order.awaitingReview) return
  if (await hasUndecidedSlips(trx, order.id)) return
  await setReviewFlag(trx, order, false, {
    actor: { name: request.decidedByActor ?? 'system', operatorId: request.decidedBy },
    reason: `approval request #${request.id} ${request.status}`,
  })
}

/*
 * Above the platform's threshold this waits for a second operator; approval
 * runs the same steps, refused while the order is frozen (a freeze stops
 * approved money).
 */
registerApprovableAction<MarkPaidData, MarkPaidPrepared>({
  name: 'payment.mark_paid',
  kind: 'mark_paid',
  approverRole: 'operator',
  describe: (data) =>
    `mark payment ${data.platform_order_id} successful` +
    (data.slip_id ? ` (slip ${data.slip_id})` : ''),
  validate: (input) => validateInput(markPaymentPaidValidator, input, MARK_PAID_MESSAGES),
  prepare: (trx, data, actor) => prepareMarkPaid(trx, data, actor),
  run: (trx, prepared, data, context) => runMarkPaid(trx, prepared, data, context),
  approvable: (trx, prepared, request) =>
    assertNotFrozenForApproval(trx, prepared.order, request.id),
  opened: (trx, prepared, request) => holdForReview(trx, prepared.order, request),
  closed: (trx, data, request) => releaseReviewHold(trx, data, request),
})
