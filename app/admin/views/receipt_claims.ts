import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { ageClass, ageLabel } from '#review/queues'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { paymentCredit } from '#ledger/recipes'
import { receivableAge, receivableWindowHours } from '#reconciliation/receivable_window'
import {
  claimOfLine,
  claimOfOrder,
  describeClaim,
  toClaim,
  type ClaimPath,
  type ReceiptClaim,
} from '#reconciliation/receipts'
import { receivableAwaiting } from '#reconciliation/line_decision'
import { receiptLineOf, receiptLineView, type ReceiptLineView } from '#admin/views/receipt_lines'

/**
 * Bank receipt claims as the back-office shows them (docs/reconciliation.md,
 * "Bank money in the ledger"): which statement line a slip, an order or a
 * decision took, who claimed it, and what a receivable waits for (stale past
 * the receivable window). Read only, without locks: the deciding actions
 * find and lock the receipt again (findPaymentReceipt, receivableAwaiting)
 * and refuse what changed.
 */

/** A receipt claim as the pages show it: what took the money, the line or the receivable, the figures. */
export interface ClaimView {
  id: number
  path: ClaimPath
  text: string
  /** A receivable: credited before its line, which has not arrived (and not taken back). */
  open: boolean
  /** A receivable whose line never came: its credit was taken back (GMT+7), by whom. */
  reversed: string | null
  reversed_by: string | null
  line: ReceiptLineView | null
  order: string | null
  order_href: string | null
  merchant: string | null
  merchant_href: string | null
  slip_id: number | null
  slip_href: string | null
  approval_request_id: number | null
  amount_policy: string
  expected: string
  received: string | null
  /** What the bank received (the line), or is to receive (a receivable), satang. */
  received_satang: number
  credited: string
  fee: string
  claimed: string | null
  cleared: string | null
  /**
   * The claim was a receivable a later line cleared. Compared on the stored
   * instants (a claim written with its line has cleared_at = claimed_at), not
   * on the formatted minutes, which are equal when the line came quickly.
   */
  cleared_receivable: boolean
  age: string
  age_class: string
  expected_from: string | null
  expected_to: string | null
  /** An open receivable older than RECEIVABLE_WINDOW_HOURS (reconcile:verify names it). */
  stale: boolean
  window_hours: number
}

export async function claimView(claim: ReceiptClaim, now = DateTime.now()): Promise<ClaimView> {
  const described = await describeClaim(db.connection(), claim)
  const windowHours = receivableWindowHours()
  const open = claim.statementLineId === null && claim.reversedAt === null
  const reversedBy =
    claim.reversedAt === null
      ? null
      : (((
          await db.from('receipt_claims').where('id', claim.id).select('reversed_by_actor').first()
        )?.reversed_by_actor as string | null | undefined) ?? null)
  const reversed = formatGatewayDateTime(claim.reversedAt)
  return {
    id: claim.id,
    path: claim.path,
    text: reversed
      ? `${described.text}; its credit was taken back by ${reversedBy ?? 'someone'} at ${reversed}`
      : described.text,
    open,
    reversed,
    reversed_by: reversedBy,
    line: await receiptLineOf(claim.statementLineId),
    order: described.platformOrderId,
    order_href: described.platformOrderId ? `/admin/orders/${described.platformOrderId}` : null,
    merchant: described.merchantPublicId,
    merchant_href: described.merchantPublicId
      ? `/admin/merchants/${described.merchantPublicId}`
      : null,
    slip_id: claim.slipId,
    slip_href: claim.slipId ? `/admin/review/slips/${claim.slipId}` : null,
    approval_request_id: claim.approvalRequestId,
    amount_policy: claim.amountPolicy,
    expected: formatThb(claim.expectedAmount),
    received: claim.receivedAmount === null ? null : formatThb(claim.receivedAmount),
    received_satang: claim.receivedAmount ?? claim.expectedAmount,
    credited: formatThb(claim.credited),
    fee: formatThb(claim.fee),
    claimed: formatGatewayDateTime(claim.claimedAt),
    cleared: formatGatewayDateTime(claim.clearedAt),
    cleared_receivable:
      claim.clearedAt !== null && claim.clearedAt.getTime() > claim.claimedAt.getTime(),
    age: ageLabel(claim.claimedAt, now),
    age_class: ageClass(claim.claimedAt, now),
    expected_from: formatGatewayDateTime(claim.expectedFrom),
    expected_to: formatGatewayDateTime(claim.expectedTo),
    stale: open && receivableAge(claim.claimedAt, now.toJSDate(), windowHours).stale,
    window_hours: windowHours,
  }
}

/** The claim on a statement line (who took its money), if any. */
export async function lineClaimView(lineId: number) {
  const claim = await claimOfLine(db.connection(), lineId)
  return claim ? claimView(claim) : null
}

/** The claim that credited a payment order (its line, or the receivable it opened), if any. */
export async function orderClaimView(paymentOrderId: number) {
  const claim = await claimOfOrder(db.connection(), paymentOrderId)
  return claim ? claimView(claim) : null
}

/** The claim holding a slip's transfer (its transRef), if any: whichever order it credited. */
export async function transferClaimView(transRef: string | null) {
  if (!transRef) return null
  const row = await db.from('receipt_claims').where('trans_ref', transRef).first()
  return row ? claimView(toClaim(row)) : null
}

/**
 * A slip's transfer on the statement: the credit line on its order's
 * deposit account whose trans_ref is the slip's, with its claim.
 */
export async function slipTransferLine(depositAccountId: number, transRef: string | null) {
  if (!transRef) return null
  const row = await db
    .from('statement_lines')
    .where('deposit_account_id', depositAccountId)
    .where('trans_ref', transRef)
    .where('direction', 'credit')
    .orderBy('id')
    .first()
  if (!row) return null
  return { line: receiptLineView(row), claim: await lineClaimView(Number(row.id)) }
}

/**
 * The open receivable a line belongs to: the matcher's own rule
 * (receivableAwaiting: the one it names by the slip's transRef or the
 * order's reference, whatever its amount, else the one expecting its amount
 * at its time), read without locks. Attaching the line to that order clears
 * the receivable; crediting or returning the line is refused.
 */
export async function receivableOfLine(line: {
  id: number
  deposit_account_id: number
  direction: string
  amount: number
  line_at: Date
  reference: string | null
  trans_ref: string | null
  status: string
}) {
  if (line.direction !== 'credit') return null
  const owed = await receivableAwaiting(db.connection(), line as any, { lock: false })
  if (!owed) return null
  const how =
    line.trans_ref && owed.transRef === line.trans_ref
      ? 'its transRef is the slip’s'
      : owed.expectedAmount === line.amount && owed.transRef === null
        ? 'it has the amount and time the receivable expects'
        : 'its reference names the order'
  return { how, claims: [await awaitedReceivable(owed, line.amount)] }
}

/**
 * An open receivable as the line page shows it; when the line brings
 * another amount than it expects, what attaching with "credit what was
 * received" would credit instead, and how the merchant's balance moves.
 */
async function awaitedReceivable(claim: ReceiptClaim, lineAmount: number) {
  const view = await claimView(claim)
  let correction: { credited: string; fee: string; moves: string } | null = null
  if (claim.expectedAmount !== lineAmount && claim.paymentOrderId !== null) {
    const order = await db
      .from('payment_orders as o')
      .join('merchants as m', 'm.id', 'o.merchant_id')
      .where('o.id', claim.paymentOrderId)
      .select('o.amount', 'o.transfer_amount', 'm.payment_fee_rate_bps')
      .first()
    if (order) {
      const credit = paymentCredit(
        { amount: Number(order.amount), transferAmount: Number(order.transfer_amount) },
        lineAmount,
        Number(order.payment_fee_rate_bps)
      )
      const moves = credit.credited - claim.credited
      correction = {
        credited: formatThb(credit.credited),
        fee: formatThb(credit.fee),
        moves: `${moves > 0 ? '+' : ''}${formatThb(moves)}`,
      }
    }
  }
  return { ...view, correction }
}
