import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { livePendingRequest, pendingRefusal } from '#approvals/approval_requests'
import { decideWithFourEyes } from '#approvals/four_eyes_decision'
import { AMOUNT_POLICIES, runMarkPaid } from '#payments/actions/mark_payment_paid'
import { assertNotFrozenForApproval } from '#payments/frozen_orders'
import {
  lockPayment,
  paymentOrderId,
  decisionComment,
  underlyingStatus,
} from '#payments/payment_rules'
import { postLedgerTransaction } from '#ledger/ledger'
import {
  latePaymentPosting,
  paymentCredit,
  receivableClearedPosting,
  receivableSettledPosting,
} from '#ledger/recipes'
import { recordOrderEvent } from '#core/order_events'
import { ActionError, validateInput } from '#core/validation'
import { formatThb, rateFee } from '#core/money'
import type { Actor } from '#core/actor'
import {
  assertLineFree,
  assertNotAwaited,
  LINE_ID_MESSAGES,
  lineTarget,
  lockLine,
  statementLineId,
  writeDecision,
  type StatementLineRow,
} from '#reconciliation/line_decision'
import {
  claimOfOrder,
  clearReceivables,
  insertClaim,
  type ReceiptClaim,
} from '#reconciliation/receipts'

/** Why an operator says a statement line pays a given order. */
export const ATTACH_LINE_REASON_CODES = [
  'late_payment',
  'reference_in_description',
  'customer_confirmed',
  'merchant_confirmed',
  'other',
] as const

const schema = vine.object({
  statement_line_id: statementLineId(),
  platform_order_id: vine.any().use(paymentOrderId()),
  reason_code: vine.enum(ATTACH_LINE_REASON_CODES),
  comment: decisionComment(),
  /**
   * Attaching the line of a payment credited before it for another amount:
   * the credit becomes what the line received (mark paid's amount_policy).
   */
  amount_policy: vine.enum(AMOUNT_POLICIES).optional(),
})

export const attachStatementLineValidator = vine.compile(schema)
export type AttachLineData = Infer<typeof schema>

export const ATTACH_LINE_MESSAGES = {
  ...LINE_ID_MESSAGES,
  'platform_order_id.required': 'platform_order_id is required: the payment order the line pays',
  'reason_code.required': `reason_code is required: one of ${ATTACH_LINE_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say what shows that this line pays this order',
}

export type AttachLinePrepared = Awaited<ReturnType<typeof prepareAttachLine>>

export type AttachLineResult =
  | {
      outcome: 'paid' | 'late_credited' | 'receivable_cleared'
      lineId: number
      order: PaymentOrder
      /** Satang put on the merchant's available balance by a late payment (null when paid). */
      credited: number | null
      fee: number | null
      request: null
    }
  | { outcome: 'approval_requested'; lineId: number; order: PaymentOrder; request: ApprovalRequest }

/**
 * Attaches an unmatched or late statement line to the payment order it
 * pays, with a reason code and a comment:
 * - an open order (or one frozen while open) is paid as if the matcher had
 *   found the line: open → unsettled_paid with its ledger posting, PAID
 *   callback and event (the mark-paid run, shared), and the line is matched;
 * - an order already closed (error is final: the late payment of an expired
 *   order) keeps its status: amount − the order's fee is credited to the
 *   merchant's available balance by a "payment_late" posting keyed by the
 *   line, and the order's timeline says so;
 * - an order credited before its line arrived (a slip approved, marked
 *   paid): the line is that receivable's, it clears it (no money moves to
 *   the merchant again).
 * Each claims the line (receipt_claims): a line, and an order, is taken
 * once. The line must hold the order's transfer_amount (or the receivable's
 * amount) on the order's deposit account; a wrong amount is credited or
 * returned instead. Above the
 * merchant's platform four-eyes threshold nothing moves: an approval request
 * is opened. A second submit finds the line decided (or its request
 * pending) and is refused.
 */
export async function attachStatementLine(
  input: Record<string, unknown>,
  actor: Actor
): Promise<AttachLineResult> {
  const data = await validateInput(attachStatementLineValidator, input, ATTACH_LINE_MESSAGES)
  const { prepared, request, result } = await decideWithFourEyes({
    action: 'statement_line.attach',
    data,
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    prepare: async (trx) => {
      const locked = await prepareAttachLine(trx, data, actor)
      const threshold = locked.platform.fourEyesThreshold
      return { prepared: locked, threshold, amount: locked.line.amount }
    },
    run: (trx, locked) => runAttachLine(trx, locked, data, { actor, request: null }),
  })
  const { line, order } = prepared
  if (request) return { outcome: 'approval_requested', lineId: line.id, order, request }
  const { outcome, credited, fee } = result
  return { outcome, lineId: line.id, order, credited, fee, request: null }
}

/** Locks the line, then the order; checks both allow the attachment now. */
export async function prepareAttachLine(
  trx: TransactionClientContract,
  data: AttachLineData,
  actor?: Actor
) {
  const line = await lockLine(trx, data.statement_line_id)
  // The order asked for, read without its lock (the line is locked first,
  // as everywhere): a repeat is "already done" only for the same order.
  const asked = await trx
    .from('payment_orders')
    .where('platform_order_id', data.platform_order_id)
    .select('id')
    .first()
  await assertLineFree(trx, line, {
    decision: 'attached',
    actor,
    paymentOrderId: asked ? Number(asked.id) : -1,
  })
  const order = await lockPayment(trx, data.platform_order_id)
  const id = order.platformOrderId
  await assertNotAwaited(trx, line, order.id)
  if (order.depositAccountId !== line.deposit_account_id) {
    throw ActionError.field(
      'platform_order_id',
      `${id} was to be paid to another deposit account than the one line #${line.id} arrived on`
    )
  }
  const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
  const platform = await Platform.findOrFail(merchant.platformId, { client: trx })
  // Locked: a line the matcher clears it with meanwhile is seen before deciding.
  const credited = await claimOfOrder(trx, order.id, { lock: true })
  const target = lineTarget(line, actor)
  if (credited && credited.statementLineId === null) {
    // Credited before its line: this line clears the receivable.
    assertClearAmount(order, line, credited, data, merchant)
    return { line, order, merchant, platform, mode: 'clear' as const, receivable: credited, target }
  }
  if (order.transferAmount !== line.amount) {
    throw ActionError.field(
      'platform_order_id',
      `${id} expects ${formatThb(order.transferAmount)} THB but line #${line.id} is ${formatThb(line.amount)} THB: credit the merchant or return the line instead`
    )
  }
  const mode = await payOrLate(trx, order, credited)
  return { line, order, merchant, platform, mode, receivable: null, target }
}

/**
 * A receivable cleared by a line of another amount than expected: the
 * credit changes to what arrived, only by decision (amount_policy).
 */
function assertClearAmount(
  order: PaymentOrder,
  line: StatementLineRow,
  receivable: ReceiptClaim,
  data: AttachLineData,
  merchant: Merchant
) {
  if (receivable.expectedAmount === line.amount || data.amount_policy === 'credit_received') return
  const now = paymentCredit(order, line.amount, merchant.paymentFeeRateBps)
  throw ActionError.field(
    'amount_policy',
    `${order.platformOrderId} was credited ${formatThb(receivable.credited)} THB for ${formatThb(receivable.expectedAmount)} THB expected, ` +
      `but line #${line.id} received ${formatThb(line.amount)} THB: credit what was received ` +
      `(${formatThb(now.credited)} THB after the fee of ${formatThb(now.fee)}; the merchant's balance moves by ${formatThb(now.credited - receivable.credited)} THB)`
  )
}

/**
 * An open order (or one frozen while open) is paid, unless a mark-paid
 * request waits on it; an error order never credited takes the line as a
 * late payment; any other is refused.
 */
async function payOrLate(
  trx: TransactionClientContract,
  order: PaymentOrder,
  credited: ReceiptClaim | null
): Promise<'pay' | 'late'> {
  const id = order.platformOrderId
  if (underlyingStatus(order) === 'open') {
    const markPaid = await livePendingRequest(trx, 'mark_paid', { type: 'payment', id })
    if (markPaid) throw pendingRefusal(markPaid, 'platform_order_id')
    return 'pay'
  }
  if (order.status === 'error' && !credited) return 'late'
  if (order.status === 'error') {
    throw ActionError.field(
      'platform_order_id',
      `${id} was already credited late from statement line #${credited!.statementLineId}: this line is another transfer (credit the merchant or return it)`
    )
  }
  throw ActionError.field(
    'platform_order_id',
    `${id} is already ${order.status}${order.status === 'freeze' ? ' (frozen after it was paid)' : ''}: this line cannot pay it again`
  )
}

/** What each way of attaching the line reports. */
const ATTACH_OUTCOMES = {
  pay: 'paid',
  clear: 'receivable_cleared',
  late: 'late_credited',
} as const

/** What a branch of the attachment put on the merchant's balance, and the fee it took. */
interface AttachCredit {
  credited: number | null
  fee: number | null
}

/**
 * The attachment itself, in the caller's transaction, after
 * prepareAttachLine: the order paid, its receivable cleared, or a late
 * payment credited; then the line's decision.
 */
export async function runAttachLine(
  trx: TransactionClientContract,
  prepared: AttachLinePrepared,
  data: AttachLineData,
  context: RunContext
) {
  const { line, order, merchant, mode } = prepared
  const { actor, request } = context
  const { credited, fee } =
    mode === 'pay'
      ? await payOrder(trx, prepared, data, context)
      : mode === 'clear'
        ? await clearReceivable(trx, prepared, data, context)
        : await creditLatePayment(trx, prepared, data, context)
  await writeDecision(trx, line, {
    decision: 'attached',
    actor,
    reason: { code: data.reason_code, comment: data.comment },
    paymentOrderId: order.id,
    merchantId: merchant.id,
    extra:
      mode === 'late'
        ? {}
        : { status: 'matched', order_type: 'payment', order_id: order.id, matched_at: new Date() },
    details: {
      platform_order_id: order.platformOrderId,
      merchant_id: merchant.merchantId,
      mode,
      amount: line.amount,
      credited,
      fee,
      requested_by: request?.requestedByActor ?? null,
    },
    requestId: request?.id ?? null,
  })
  return {
    outcome: ATTACH_OUTCOMES[mode],
    statement_line_id: line.id,
    platform_order_id: order.platformOrderId,
    order_status: order.status,
    credited,
    fee,
  }
}

/** An open order: the same change as an operator marking it paid, from the statement's evidence. */
async function payOrder(
  trx: TransactionClientContract,
  prepared: AttachLinePrepared,
  data: AttachLineData,
  context: RunContext
): Promise<AttachCredit> {
  const { line, order, platform } = prepared
  const said = `statement line #${line.id} (${data.reason_code}): ${data.comment}`
  await runMarkPaid(
    trx,
    {
      order,
      slip: null,
      platform,
      target: {
        type: 'payment',
        id: order.platformOrderId,
        amount: order.amount,
        reviewedBy: null,
      },
      receipt: { kind: 'line', line, how: 'attached' },
      claimPath: 'attach',
    },
    { platform_order_id: order.platformOrderId, reason_code: 'seen_on_statement', comment: said },
    context
  )
  return { credited: null, fee: order.fee }
}

/**
 * An order credited before its line: the line clears the receivable; when
 * it received another amount, what arrived decides and the credit given on
 * the slip's word is corrected.
 */
async function clearReceivable(
  trx: TransactionClientContract,
  prepared: AttachLinePrepared,
  data: AttachLineData,
  context: RunContext
): Promise<AttachCredit> {
  const { line, order, merchant } = prepared
  const { actor, request } = context
  const receivable = prepared.receivable!
  let settled: ReturnType<typeof paymentCredit> | null = null
  if (receivable.expectedAmount === line.amount) {
    await postLedgerTransaction(trx, receivableClearedPosting(line, order))
  } else {
    settled = paymentCredit(order, line.amount, merchant.paymentFeeRateBps)
    await postLedgerTransaction(
      trx,
      receivableSettledPosting({
        line,
        order,
        expected: receivable.expectedAmount,
        before: { creditedBase: order.paidAmount ?? order.amount, fee: order.fee ?? 0 },
        after: settled,
        account: underlyingStatus(order) === 'settled_paid' ? 'available' : 'unsettled',
      })
    )
    order.paidAmount = settled.creditedBase
    order.fee = settled.fee
    await order.useTransaction(trx).save()
  }
  const credit = settled ? { credited: settled.credited, fee: settled.fee } : undefined
  await clearReceivables(
    trx,
    [{ claimId: receivable.id, lineId: line.id, amount: line.amount, credit }],
    new Date()
  )
  await recordOrderEvent(trx, {
    orderType: 'payment',
    orderId: order.id,
    from: order.status,
    to: order.status,
    actor,
    reason:
      `statement line #${line.id} attached: the payment credited before its line is backed by the bank` +
      (settled
        ? ` for ${formatThb(line.amount)} THB received: credit corrected to ${formatThb(settled.credited)} THB (fee ${formatThb(settled.fee)})`
        : '') +
      (request ? `, approval request #${request.id}` : '') +
      `: ${data.comment}`,
  })
  return credit ?? { credited: null, fee: null }
}

/**
 * An order already closed (error is final): it keeps its status, and the
 * amount less its fee goes to the merchant's available balance.
 */
async function creditLatePayment(
  trx: TransactionClientContract,
  prepared: AttachLinePrepared,
  data: AttachLineData,
  context: RunContext
): Promise<AttachCredit> {
  const { line, order, merchant } = prepared
  const { actor, request } = context
  const fee = order.fee ?? rateFee(order.amount, merchant.paymentFeeRateBps)
  const credited = order.amount - fee
  const postingId = await postLedgerTransaction(trx, latePaymentPosting(order, line, fee))
  // The line and the order are claimed once: a second late credit of either is refused.
  await insertClaim(
    trx,
    {
      depositAccountId: line.deposit_account_id,
      statementLineId: line.id,
      path: 'late_credit',
      actor,
      paymentOrderId: order.id,
      merchantId: merchant.id,
      expectedAmount: line.amount,
      credited,
      fee,
      approvalRequestId: request?.id ?? null,
      ledgerTransactionId: postingId,
    },
    'statement_line_id'
  )
  await recordOrderEvent(trx, {
    orderType: 'payment',
    orderId: order.id,
    from: order.status,
    to: order.status,
    actor,
    reason:
      `late payment: statement line #${line.id} credited ${formatThb(credited)} THB ` +
      `(fee ${formatThb(fee)}) to the merchant's balance` +
      (request ? `, approval request #${request.id}` : '') +
      `: ${data.comment}`,
  })
  return { credited, fee }
}

/*
 * A line decision waits for a second operator above the threshold; approval
 * pays the order, so it is refused while the order is frozen. Shares its
 * kind with crediting a merchant: one pending decision per line.
 */
registerApprovableAction<AttachLineData, AttachLinePrepared>({
  name: 'statement_line.attach',
  kind: 'line_decision',
  approverRole: 'operator',
  describe: (data) =>
    `attach statement line #${data.statement_line_id} to payment ${data.platform_order_id}`,
  validate: (input) => validateInput(attachStatementLineValidator, input, ATTACH_LINE_MESSAGES),
  prepare: (trx, data, actor) => prepareAttachLine(trx, data, actor),
  run: (trx, prepared, data, context) => runAttachLine(trx, prepared, data, context),
  approvable: (trx, prepared, request) =>
    assertNotFrozenForApproval(trx, prepared.order, request.id),
})
