import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import { lockBankAccount } from '#ledger/ledger'
import { ActionError } from '#core/validation'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import type { StatementLineRow } from '#reconciliation/line_decision'
import { senderBankOf } from '#reconciliation/statement_line'
import {
  describeClaim,
  ReceiptClaimedError,
  toClaim,
  type ReceiptClaim,
} from '#reconciliation/receipts'

/**
 * The bank receipt of a payment an operator marks paid (a slip approved, a
 * payment marked paid): the statement line that is its transfer, or, when
 * the line has not arrived yet, the receivable it opens
 * (docs/reconciliation.md, "Which line is a payment's").
 */

/** Statement times are minute-precise; a slip's time is to the second. */
export const SLIP_LINE_SLACK_SECONDS = 120
/** An order's transfer can be on the statement from a minute before it was created. */
const ORDER_SLACK_SECONDS = 60

/** What a slip says of its transfer. */
export interface SlipEvidence {
  slipId: number
  /** The transaction reference of the slip's mini-QR. */
  transRef: string | null
  /** The sending bank's 3-digit code the mini-QR names, when it does. */
  sendingBank: string | null
  /** What a source established of the transfer (amount, time), if any. */
  facts: { amount: number; transferredAt: Date | null } | null
}

export type PaymentReceipt =
  | {
      kind: 'line'
      line: StatementLineRow
      /** How the line was found. */
      how: 'trans_ref' | 'slip_facts' | 'reference' | 'amount_and_time' | 'attached'
    }
  | {
      kind: 'receivable'
      expectedAmount: number
      expectedFrom: Date
      expectedTo: Date
      transRef: string | null
    }

/** The amount the bank received (or is to receive) for the payment, by this receipt. */
export function receivedAmount(receipt: PaymentReceipt) {
  return receipt.kind === 'line' ? receipt.line.amount : receipt.expectedAmount
}

/** What a slip row says of its transfer: its transRef, and its source's facts. */
export function slipEvidence(slip: {
  id: number
  transRef: string | null
  sendingBank: string | null
  verification: Record<string, unknown> | null
}): SlipEvidence {
  const facts = (slip.verification?.facts ?? null) as {
    amount?: number
    transferred_at?: string | null
  } | null
  return {
    slipId: slip.id,
    transRef: slip.transRef,
    sendingBank: slip.sendingBank,
    facts:
      facts && typeof facts.amount === 'number'
        ? {
            amount: facts.amount,
            transferredAt: facts.transferred_at ? new Date(facts.transferred_at) : null,
          }
        : null,
  }
}

type LineWithClaim = StatementLineRow & { claim: ReceiptClaim | null }

/**
 * Finds the receipt of `order` (locked by the caller) in the caller's
 * transaction, holding the account's bank lock (lockBankAccount): no line
 * of the account is stored meanwhile, so "no line yet" stays true until the
 * receivable is written. In order:
 *
 * 1. the credit line carrying the slip's transaction reference;
 * 2. the one credit line with the amount and time a slip source gave (of
 *    several, the one whose description names the slip's sending bank);
 * 3. the credit line naming the order (its Ref1 or platform_order_id);
 * 4. the one unclaimed credit line of transfer_amount from the order's
 *    creation to now.
 *
 * A line found by what identifies it (1 to 3) and already claimed refuses
 * the decision, naming who took it; so does a slip transaction another
 * claim holds. Several lines that fit (2, 4) are for an operator to choose
 * (attach one). No line: a receivable, for the amount a slip source gave or
 * transfer_amount, in the window the line is expected to carry.
 */
export async function findPaymentReceipt(
  trx: TransactionClientContract,
  order: PaymentOrderTerms,
  slip: SlipEvidence | null
): Promise<PaymentReceipt> {
  await lockBankAccount(trx, order.depositAccountId)
  const located = await locatePaymentReceipt(trx, order, slip, { lock: true })
  if (located.kind === 'claimed') {
    throw new ReceiptClaimedError(await describeClaim(trx, located.claim), located.what, null)
  }
  if (located.kind === 'not_a_payment') {
    throw ActionError.general(
      `this transfer is statement line #${located.line.id}, matched to ${located.line.note ?? 'a payout'}: it pays no payment`
    )
  }
  if (located.kind === 'ambiguous') throw ambiguous(order, located.lines)
  return located
}

/** The order's terms the search reads. */
export type PaymentOrderTerms = Pick<
  PaymentOrder,
  | 'depositAccountId'
  | 'platformOrderId'
  | 'paymentReference'
  | 'transferAmount'
  | 'orderAt'
  | 'expireAt'
>

/**
 * What the search finds: the payment's receipt, or why a decision would be
 * refused (its line taken by another claim, a line matched to a payout,
 * several lines that fit).
 */
export type LocatedReceipt =
  | PaymentReceipt
  | { kind: 'claimed'; what: string; claim: ReceiptClaim; line: StatementLineRow | null }
  | { kind: 'not_a_payment'; line: StatementLineRow }
  | { kind: 'ambiguous'; lines: StatementLineRow[] }

/**
 * The rules of findPaymentReceipt (above), on `client`: with `lock`, in the
 * deciding transaction (the caller holds the bank lock), the lines found
 * are locked; without, a read for the back-office's preview of what a
 * decision would take.
 */
export async function locatePaymentReceipt(
  client: QueryClientContract,
  order: PaymentOrderTerms,
  slip: SlipEvidence | null,
  options: { lock: boolean; now?: Date }
): Promise<LocatedReceipt> {
  const now = options.now ?? new Date()
  const read = (rows: Array<Record<string, any>>) => withClaims(client, rows, options.lock)
  const credits = () =>
    client
      .from('statement_lines as l')
      .leftJoin('receipt_claims as c', 'c.statement_line_id', 'l.id')
      .where('l.deposit_account_id', order.depositAccountId)
      .where('l.direction', 'credit')
      .orderBy('l.id')
      .select('l.*', 'c.id as claim_id')

  if (slip?.transRef) {
    const taken = await client
      .from('receipt_claims')
      .where('trans_ref', slip.transRef)
      // The claim holding it first (a reversed receivable no longer does).
      .orderByRaw('reversed_at IS NOT NULL, id')
      .first()
    // A claim holding it only as its line's transfer, on this account: the
    // line is found below and named with the decision that took it.
    const lineHere =
      taken &&
      taken.statement_line_id !== null &&
      taken.slip_id === null &&
      Number(taken.deposit_account_id) === order.depositAccountId
    if (taken && !lineHere) {
      const claim = toClaim(taken)
      return {
        kind: 'claimed',
        what: `the transfer ${slip.transRef} of slip ${slip.slipId}`,
        claim,
        line: null,
      }
    }
    const [line] = await read(await credits().where('l.trans_ref', slip.transRef))
    if (line) return identified(line, 'trans_ref')
  }

  if (slip?.facts?.transferredAt) {
    const at = slip.facts.transferredAt.getTime()
    const lines = await read(
      await credits()
        .whereNot('l.status', 'matched')
        .where('l.amount', slip.facts.amount)
        .whereBetween('l.line_at', [
          new Date(at - SLIP_LINE_SLACK_SECONDS * 1000),
          new Date(at + SLIP_LINE_SLACK_SECONDS * 1000),
        ])
    )
    let open = lines.filter((line) => line.claim === null)
    if (open.length > 1 && slip.sendingBank) {
      // Several transfers of that amount that minute: the one from the slip's bank.
      const fromBank = open.filter((line) => senderBankOf(line.description) === slip.sendingBank)
      if (fromBank.length > 0) open = fromBank
    }
    if (open.length === 1) return { kind: 'line', line: open[0], how: 'slip_facts' }
    if (open.length > 1) return { kind: 'ambiguous', lines: open }
    if (lines.length === 1) return identified(lines[0], 'slip_facts')
  }

  const references = [order.paymentReference, order.platformOrderId].filter(
    (reference): reference is string => !!reference
  )
  const window = orderWindow(order, now)
  // No line names an order before it exists: the time bounds the search.
  const [named] = await read(
    await credits()
      .whereIn('l.reference', references)
      .where('l.line_at', '>=', window.from)
      .limit(1)
  )
  if (named) return identified(named, 'reference')

  const fitting = (
    await read(
      await credits()
        .where('l.amount', order.transferAmount)
        .whereNot('l.status', 'matched')
        .whereNull('c.id')
        .whereBetween('l.line_at', [window.from, window.to])
    )
  ).filter((line) => line.claim === null)
  if (fitting.length === 1) return { kind: 'line', line: fitting[0], how: 'amount_and_time' }
  if (fitting.length > 1) return { kind: 'ambiguous', lines: fitting }

  const transferredAt = slip?.facts?.transferredAt
  return {
    kind: 'receivable',
    expectedAmount: slip?.facts?.amount ?? order.transferAmount,
    expectedFrom: transferredAt
      ? new Date(transferredAt.getTime() - SLIP_LINE_SLACK_SECONDS * 1000)
      : window.from,
    expectedTo: transferredAt
      ? new Date(transferredAt.getTime() + SLIP_LINE_SLACK_SECONDS * 1000)
      : window.to,
    transRef: slip?.transRef ?? null,
  }
}

/** From a minute before the order was created to a minute from now (or its expiry, if later). */
function orderWindow(order: PaymentOrderTerms, now: Date) {
  const end = Math.max(now.getTime(), order.expireAt.toMillis())
  return {
    from: new Date(order.orderAt.toMillis() - ORDER_SLACK_SECONDS * 1000),
    to: new Date(end + ORDER_SLACK_SECONDS * 1000),
  }
}

/** The lines found, each with its claim as it is now; locked (FOR UPDATE) with `lock`. */
async function withClaims(
  client: QueryClientContract,
  found: Array<Record<string, any>>,
  lock: boolean
): Promise<LineWithClaim[]> {
  if (found.length === 0) return []
  const query = client
    .from('statement_lines')
    .whereIn(
      'id',
      found.map((row) => row.id)
    )
    .orderBy('id')
  const rows = lock ? await query.forUpdate() : await query
  const claims = await client.from('receipt_claims').whereIn(
    'statement_line_id',
    rows.map((row) => row.id)
  )
  const claimOf = new Map(claims.map((claim) => [Number(claim.statement_line_id), toClaim(claim)]))
  return rows.map((row) => ({
    ...(row as StatementLineRow),
    id: Number(row.id),
    amount: Number(row.amount),
    claim: claimOf.get(Number(row.id)) ?? null,
  }))
}

/**
 * A line found by what identifies it: the payment's receipt, unless another
 * decision took it or it is matched to a payout (a credit the bank returned).
 */
function identified(
  line: LineWithClaim,
  how: 'trans_ref' | 'slip_facts' | 'reference'
): LocatedReceipt {
  if (line.claim) {
    return {
      kind: 'claimed',
      what: `this transfer is statement line #${line.id} (${formatThb(line.amount)} THB), which`,
      claim: line.claim,
      line,
    }
  }
  if (line.status === 'matched') return { kind: 'not_a_payment', line }
  return { kind: 'line', line, how }
}

function ambiguous(order: PaymentOrderTerms, lines: StatementLineRow[]) {
  const list = lines
    .map((line) => `#${line.id} at ${formatGatewayDateTime(line.line_at)}`)
    .join(', ')
  return ActionError.general(
    `${lines.length} statement lines could be the transfer of ${order.platformOrderId} (${list}): attach the right one from the statement lines queue`
  )
}
