import type PaymentSlip from '#slips/models/payment_slip'
import type PaymentOrder from '#payments/models/payment_order'
import { slipDetails } from '#slips/slip_details'
import { slipDecidable } from '#slips/slip_review'
import { slipEvidence } from '#reconciliation/payment_receipts'
import { ageClass, ageLabel } from '#review/queues'
import { slipPageRecords } from '#admin/queries/slip_page'
import { orderClaimView, slipTransferLine, transferClaimView } from '#admin/views/receipt_claims'
import {
  previewPaymentReceipt,
  previewReceived,
  receivedVersusTransfer,
} from '#admin/views/receipt_previews'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'

/**
 * The slip page's bank receipt: the statement line that is the slip's
 * transfer (trans_ref on the order's deposit account) and who claimed it,
 * the claim that credited the order, what approving would take now (a
 * line, or a receivable its line will clear) and the amount received
 * against transfer_amount, with the credit it gives. `decidable`: the slip
 * can still be approved (slipDecidable).
 */
async function slipReceipt(slip: PaymentSlip, order: PaymentOrder, decidable: boolean) {
  const transfer = await slipTransferLine(order.depositAccountId, slip.transRef)
  const transferClaim = await transferClaimView(slip.transRef)
  const orderClaim = await orderClaimView(order.id)
  const evidence = slipEvidence(slip)
  const preview = decidable ? await previewPaymentReceipt(order, evidence) : null
  const facts = ((slip.verification ?? {}) as Record<string, any>).facts
  let received: number | null = null
  let receivedFrom: string | null = null
  if (orderClaim) {
    received = orderClaim.received_satang
    receivedFrom = orderClaim.line
      ? `statement line #${orderClaim.line.id}, claimed for this order`
      : 'expected by the receivable this order was credited from; its line has not arrived'
  } else if (preview?.kind === 'line') {
    received = preview.received
    receivedFrom = `statement line #${preview.line.id}`
  } else if (transfer) {
    received = transfer.line.amount_satang
    receivedFrom = `statement line #${transfer.line.id}`
  } else if (evidence.facts) {
    received = evidence.facts.amount
    receivedFrom = `the slip’s source (${String(facts?.source ?? 'a verifier')}); no line yet`
  }
  const fee = order.merchant.paymentFeeRateBps
  const claimed = transfer?.claim ?? transferClaim
  // What approving credits: the amount the decision's receipt brings (the action's own rule).
  const policy = receivedVersusTransfer(order, previewReceived(preview), fee)
  return {
    trans_ref: slip.transRef,
    transfer: transfer?.line ?? null,
    claimed,
    order_claim: orderClaim && orderClaim.id !== claimed?.id ? orderClaim : null,
    preview,
    amounts: receivedVersusTransfer(order, received, fee),
    received_from: receivedFrom,
    policy: policy?.differs ? policy : null,
  }
}

/** The order beside the slip. */
function presentOrder(order: PaymentOrder) {
  return {
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    merchant: `${order.merchant.merchantId} · ${order.merchant.name}`,
    status: order.status,
    awaiting_review: order.awaitingReview,
    amount: formatThb(order.amount),
    transfer_amount: formatThb(order.transferAmount),
    customer: `${order.customerBank} ${order.customerAccountNo} · ${order.customerAccountName}`,
    account: `${order.depositAccount.bank} ${order.depositAccount.accountNo} · ${order.depositAccount.accountName}`,
    created: formatGatewayDateTime(order.orderAt),
    expires: formatGatewayDateTime(order.expireAt),
  }
}

/**
 * One slip's decision page: the image beside the order, its checks, the
 * bank receipt, nearby statement lines, the decision taken or the request
 * waiting, and who holds it. Null for an id that names no slip.
 */
export async function slipPage(id: string) {
  const found = await slipPageRecords(id)
  if (!found) return null
  const { slip, order, live, around, pending, reviewer } = found
  const details = slipDetails(slip, {
    statementLines: slip.transRef ? live.get(slip.transRef) : undefined,
  })
  const decidable = slipDecidable(slip, order, pending !== null)
  return {
    slip: details,
    receipt: await slipReceipt(slip, order, decidable),
    order: presentOrder(order),
    linesAround: formatGatewayDateTime(around),
    linesBasis: found.byTransferTime ? 'the slip’s transfer time' : 'the upload time',
    lines: found.lines,
    decided: slip.reviewDecision
      ? {
          decision: slip.reviewDecision,
          by: reviewer?.email ?? (slip.reviewedBy ? `operator ${slip.reviewedBy}` : 'system'),
          at: formatGatewayDateTime(slip.reviewedAt),
          reason_code: slip.reviewReasonCode,
          comment: slip.reviewComment,
        }
      : null,
    pending: pending ? { id: pending.id, requested_by: pending.requestedByActor } : null,
    holder: found.holder?.operatorEmail ?? null,
    age: ageLabel(slip.createdAt),
    ageClass: ageClass(slip.createdAt),
  }
}
