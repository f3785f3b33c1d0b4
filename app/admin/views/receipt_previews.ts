import db from '@adonisjs/lucid/services/db'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { paymentCredit } from '#ledger/recipes'
import {
  locatePaymentReceipt,
  type PaymentOrderTerms,
  type SlipEvidence,
} from '#reconciliation/payment_receipts'
import { claimView, type ClaimView } from '#admin/views/receipt_claims'
import { receiptLineView, type ReceiptLineView } from '#admin/views/receipt_lines'

/**
 * What marking a payment paid would take now, as the slip, order and
 * approval pages show it before the decision: the line, the claim already
 * holding it, the lines that make it ambiguous, or the receivable it would
 * open; and the amount received against the order's transfer_amount. Read
 * without locks: the decision finds and locks the receipt again.
 */

/** How a decision finds a payment's line, in the operators' words. */
const FOUND_BY: Record<string, string> = {
  trans_ref: 'it carries the slip’s transRef',
  slip_facts: 'it has the amount and time the slip’s source gave',
  reference: 'it names the order',
  amount_and_time: 'the one unclaimed credit of the transfer_amount since the order was created',
}

/** What marking a payment paid (a slip approved, or without one) would take now. */
export type ReceiptPreview =
  | { kind: 'line'; line: ReceiptLineView; found_by: string; received: number }
  | { kind: 'claimed'; line: ReceiptLineView | null; what: string; claim: ClaimView }
  | { kind: 'ambiguous'; lines: ReceiptLineView[]; message: string }
  | {
      kind: 'receivable'
      received: number
      expected: string
      expected_from: string | null
      expected_to: string | null
      trans_ref: string | null
    }

/** The payment order fields the preview reads. */
export type PreviewOrder = PaymentOrderTerms

/**
 * The receipt a payment decision would take now: findPaymentReceipt's own
 * rules (locatePaymentReceipt), read without locks. A line another decision
 * took (or a slip transfer another claim holds) is shown with that claim,
 * several lines that fit are listed: the decision would be refused.
 */
export async function previewPaymentReceipt(
  order: PreviewOrder,
  slip: SlipEvidence | null,
  now = new Date()
): Promise<ReceiptPreview> {
  const located = await locatePaymentReceipt(db.connection(), order, slip, { lock: false, now })
  switch (located.kind) {
    case 'line':
      return {
        kind: 'line',
        line: receiptLineView(located.line),
        found_by: FOUND_BY[located.how],
        received: located.line.amount,
      }
    case 'claimed': {
      const claim = await claimView(located.claim)
      return {
        kind: 'claimed',
        line: located.line ? receiptLineView(located.line) : claim.line,
        what: located.line ? `statement line #${located.line.id}` : located.what,
        claim,
      }
    }
    case 'not_a_payment':
      return {
        kind: 'ambiguous',
        lines: [receiptLineView(located.line)],
        message: `statement line #${located.line.id} is matched to a payout: it pays no payment`,
      }
    case 'ambiguous': {
      const lines = located.lines.map(receiptLineView)
      return {
        kind: 'ambiguous',
        lines,
        message: `${lines.length} statement lines could be the transfer of ${order.platformOrderId}: the decision is refused until the right one is attached from the statement lines queue`,
      }
    }
    case 'receivable':
      return {
        kind: 'receivable',
        received: located.expectedAmount,
        expected: formatThb(located.expectedAmount),
        expected_from: formatGatewayDateTime(located.expectedFrom),
        expected_to: formatGatewayDateTime(located.expectedTo),
        trans_ref: located.transRef,
      }
  }
}

/** The amount a preview says the bank received (or is to receive), if it names one. */
export function previewReceived(preview: ReceiptPreview | null) {
  return preview && (preview.kind === 'line' || preview.kind === 'receivable')
    ? preview.received
    : null
}

/**
 * The amount received against the order's transfer_amount, and what
 * crediting it would give the merchant (paymentCredit: the order's amount
 * when the transfer is exact, what was received otherwise, less the fee).
 */
export function receivedVersusTransfer(
  order: { amount: number; transferAmount: number },
  received: number | null,
  feeRateBps: number
) {
  if (received === null) return null
  const credit = paymentCredit(order, received, feeRateBps)
  const difference = received - order.transferAmount
  return {
    received: formatThb(received),
    transfer_amount: formatThb(order.transferAmount),
    differs: difference !== 0,
    difference: `${difference > 0 ? '+' : ''}${formatThb(difference)}`,
    credited: formatThb(credit.credited),
    fee: formatThb(credit.fee),
  }
}
