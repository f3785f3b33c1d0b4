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
import {
  locatePaymentReceipt,
  type PaymentOrderTerms,
  type SlipEvidence,
} from '#reconciliation/payment_receipts'
import { receivableAwaiting } from '#reconciliation/line_decision'
import {
  confirmationOfLine,
  confirmationOfPayout,
  describeConfirmation,
  type ConfirmationPath,
  type PayoutConfirmation,
} from '#payouts/payout_confirmations'

/**
 * Bank receipts as the back-office shows them (docs/reconciliation.md, "Bank
 * money in the ledger"): which statement line a slip, an order or a
 * decision takes, who claimed it, and what a receivable waits for. Read
 * only, without locks: the deciding actions find and lock the receipt
 * again (findPaymentReceipt, receivableAwaiting) and refuse what changed.
 */

/** A statement line as the bank-receipt panels show it, linked to its page. */
export interface ReceiptLineView {
  id: number
  href: string
  deposit_account_id: number
  direction: string
  amount: string
  amount_satang: number
  time: string | null
  status: string
  reference: string | null
  trans_ref: string | null
}

function receiptLineView(row: Record<string, any>): ReceiptLineView {
  return {
    id: Number(row.id),
    href: `/admin/review/lines/${row.id}`,
    deposit_account_id: Number(row.deposit_account_id),
    direction: row.direction,
    amount: formatThb(Number(row.amount)),
    amount_satang: Number(row.amount),
    time: formatGatewayDateTime(row.line_at),
    status: row.status,
    reference: row.reference ?? null,
    trans_ref: row.trans_ref ?? null,
  }
}

/** A statement line as the bank-receipt panels show it, or null. */
export async function receiptLineOf(id: number | null) {
  if (id === null) return null
  const row = await db.from('statement_lines').where('id', id).first()
  return row ? receiptLineView(row) : null
}

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

/**
 * The slips whose transaction reference is this line's, of any order: the
 * slip, its order (and whether it was to be paid on this line's account),
 * the verification and the review decision.
 */
export async function slipsOfLine(transRef: string | null, depositAccountId: number) {
  if (!transRef) return []
  const rows = await db
    .from('payment_slips as s')
    .join('payment_orders as o', 'o.id', 's.payment_order_id')
    .join('merchants as m', 'm.id', 's.merchant_id')
    .leftJoin('operators as op', 'op.id', 's.reviewed_by')
    .where('s.trans_ref', transRef)
    .orderBy('s.id')
    .limit(20)
    .select(
      's.id',
      's.source',
      's.created_at',
      's.verification_status',
      's.verification_msg',
      's.review_decision',
      's.review_reason_code',
      's.reviewed_at',
      's.reviewed_by',
      'op.email as reviewer',
      'o.platform_order_id',
      'o.status as order_status',
      'o.deposit_account_id',
      'm.merchant_id'
    )
  return rows.map((row) => ({
    id: Number(row.id),
    href: `/admin/review/slips/${row.id}`,
    source: row.source as string,
    uploaded: formatGatewayDateTime(row.created_at),
    verification_status: row.verification_status as string,
    verification_msg: row.verification_msg as string,
    review_decision: (row.review_decision as string | null) ?? null,
    review_reason_code: (row.review_reason_code as string | null) ?? null,
    reviewed_at: formatGatewayDateTime(row.reviewed_at),
    reviewer:
      (row.reviewer as string | null) ?? (row.reviewed_by ? `operator ${row.reviewed_by}` : null),
    platform_order_id: row.platform_order_id as string,
    order_href: `/admin/orders/${row.platform_order_id}`,
    order_status: row.order_status as string,
    merchant_id: row.merchant_id as string,
    other_account: Number(row.deposit_account_id) !== depositAccountId,
  }))
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

/**
 * Money out as the back-office shows it (docs/reconciliation.md, "Money
 * out"): the transfer a debit line confirms (a payout, the return of a
 * credit to its payer, or an operator's explanation), a payout's debit line
 * or the wait for it, and the transfers a debit nobody claims may be.
 */

/** A payout_confirmations row as the line and order pages show it. */
export interface ConfirmationView {
  id: number
  path: ConfirmationPath
  /** describeConfirmation: the words the refusals use too. */
  text: string
  kind: 'payout' | 'return' | 'explained'
  /** The payout's row id (what describeConfirmation names), and its platform_order_id. */
  payout_order_id: number | null
  platform_order_id: string | null
  order_href: string | null
  order_status: string | null
  returned_line_id: number | null
  returned_line_href: string | null
  /** The debit line that confirms it; null: an open item, waiting for it. */
  line: ReceiptLineView | null
  /** The deposit account the money left (bank and number), once known. */
  account: string | null
  account_href: string | null
  amount: string
  actor: string
  reason: string | null
  recorded: string | null
  confirmed: string | null
  age: string
  age_class: string
}

export async function confirmationView(
  confirmation: PayoutConfirmation,
  now = DateTime.now()
): Promise<ConfirmationView> {
  const order =
    confirmation.payoutOrderId === null
      ? null
      : await db
          .from('payout_orders')
          .where('id', confirmation.payoutOrderId)
          .select('platform_order_id', 'status')
          .first()
  const platformOrderId: string | null = order?.platform_order_id ?? null
  const account =
    confirmation.depositAccountId === null
      ? null
      : await db
          .from('deposit_accounts')
          .where('id', confirmation.depositAccountId)
          .select('bank', 'account_no')
          .first()
  return {
    id: confirmation.id,
    path: confirmation.path,
    text: describeConfirmation(confirmation),
    kind:
      confirmation.path === 'bank_charge'
        ? 'explained'
        : confirmation.returnedLineId !== null
          ? 'return'
          : 'payout',
    payout_order_id: confirmation.payoutOrderId,
    platform_order_id: platformOrderId,
    order_href: platformOrderId ? `/admin/orders/${platformOrderId}` : null,
    order_status: order?.status ?? null,
    returned_line_id: confirmation.returnedLineId,
    returned_line_href:
      confirmation.returnedLineId === null
        ? null
        : `/admin/review/lines/${confirmation.returnedLineId}`,
    line: await receiptLineOf(confirmation.statementLineId),
    account: account ? `${account.bank} ${account.account_no}` : null,
    account_href: account ? `/admin/deposit-accounts/${confirmation.depositAccountId}` : null,
    amount: formatThb(confirmation.amount),
    actor: confirmation.actor,
    reason: confirmation.reason,
    recorded: formatGatewayDateTime(confirmation.createdAt),
    confirmed: formatGatewayDateTime(confirmation.confirmedAt),
    age: ageLabel(confirmation.createdAt, now),
    age_class: ageClass(confirmation.createdAt, now),
  }
}

/** What a debit line confirms (or an operator's explanation of it), if anything. */
export async function lineConfirmationView(lineId: number) {
  const confirmation = await confirmationOfLine(db.connection(), lineId)
  return confirmation ? confirmationView(confirmation) : null
}

/** A payout's transfer out: its confirmation (with its debit line, or waiting), if it succeeded. */
export async function payoutConfirmationView(payoutOrderId: number) {
  const confirmation = await confirmationOfPayout(db.connection(), payoutOrderId)
  return confirmation ? confirmationView(confirmation) : null
}

/** A transfer a debit line may be, for the line page's "It is this transfer" form. */
export interface DebitCandidate {
  kind: 'waiting' | 'pending' | 'return'
  /** The form field it fills, and its value. */
  field: 'platform_order_id' | 'returned_line_id'
  value: string
  label: string
  href: string
  status: string
  amount: string
  time: string | null
  who: string
  why: string
}

/**
 * The transfers a debit nobody claims may be, of its exact amount (the
 * confirmation refuses any other): successful payouts waiting for their
 * debit line, pending payouts (the statement would be the bank's answer),
 * and the returns to a payer waiting on the same deposit account; the
 * nearest in time first.
 */
export async function debitCandidates(line: {
  deposit_account_id: number
  amount: number
  line_at: Date
}): Promise<DebitCandidate[]> {
  const { amount } = line
  const lineAt = line.line_at
  const payoutColumns = [
    'o.platform_order_id',
    'o.kind',
    'o.status',
    'o.amount',
    'o.bank',
    'o.account_no',
    'o.account_name',
    'o.connector',
    'm.merchant_id',
    'm.name as merchant_name',
  ]
  const waiting = await db
    .from('payout_confirmations as p')
    .join('payout_orders as o', 'o.id', 'p.payout_order_id')
    .join('merchants as m', 'm.id', 'o.merchant_id')
    .whereNull('p.statement_line_id')
    .where('o.amount', amount)
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, p.created_at, ?))', [lineAt])
    .limit(10)
    .select(...payoutColumns, 'p.path', 'p.created_at as sent_at')
  const pending = await db
    .from('payout_orders as o')
    .join('merchants as m', 'm.id', 'o.merchant_id')
    .whereIn('o.kind', ['withdraw', 'settlement'])
    .where('o.amount', amount)
    .where('o.status', 'pending')
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, o.order_at, ?))', [lineAt])
    .limit(10)
    .select(...payoutColumns, 'o.order_at')
  const returns = await db
    .from('payout_confirmations as p')
    .join('statement_lines as r', 'r.id', 'p.returned_line_id')
    .where('p.path', 'return')
    .whereNull('p.statement_line_id')
    .where('p.deposit_account_id', line.deposit_account_id)
    .where('p.amount', amount)
    .orderByRaw('ABS(TIMESTAMPDIFF(SECOND, p.created_at, ?))', [lineAt])
    .limit(10)
    .select(
      'p.created_at as returned_at',
      'p.actor',
      'r.id as returned_line_id',
      'r.line_at',
      'r.return_bank',
      'r.return_account_no',
      'r.return_account_name'
    )
  const kindWord = (kind: string) => (kind === 'settlement' ? 'settlement' : 'withdrawal')
  const payee = (row: Record<string, any>) =>
    `${row.merchant_id} · ${row.merchant_name} → ${row.bank} ${row.account_no} (${row.account_name})`
  return [
    ...waiting.map((row) => ({
      kind: 'waiting' as const,
      field: 'platform_order_id' as const,
      value: row.platform_order_id as string,
      label: row.platform_order_id as string,
      href: `/admin/orders/${row.platform_order_id}`,
      status: `${row.status} (${row.path})`,
      amount: formatThb(Number(row.amount)),
      time: formatGatewayDateTime(row.sent_at),
      who: payee(row),
      why: `${kindWord(row.kind)} sent, waiting for its debit line since ${formatGatewayDateTime(row.sent_at)}`,
    })),
    ...pending.map((row) => ({
      kind: 'pending' as const,
      field: 'platform_order_id' as const,
      value: row.platform_order_id as string,
      label: row.platform_order_id as string,
      href: `/admin/orders/${row.platform_order_id}`,
      status: `${row.status} (${row.connector})`,
      amount: formatThb(Number(row.amount)),
      time: formatGatewayDateTime(row.order_at),
      who: payee(row),
      why: `${kindWord(row.kind)} pending at the bank: confirming completes it`,
    })),
    ...returns.map((row) => ({
      kind: 'return' as const,
      field: 'returned_line_id' as const,
      value: String(row.returned_line_id),
      label: `line #${row.returned_line_id}`,
      href: `/admin/review/lines/${row.returned_line_id}`,
      status: 'returned',
      amount: formatThb(amount),
      time: formatGatewayDateTime(row.returned_at),
      who: `${row.return_bank} ${row.return_account_no} (${row.return_account_name})`,
      why: `credit of ${formatGatewayDateTime(row.line_at)} returned to its payer by ${row.actor}, waiting for its debit on this account`,
    })),
  ]
}
