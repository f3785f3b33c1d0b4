import type PaymentOrder from '#payments/models/payment_order'
import type PayoutOrder from '#payouts/models/payout_order'
import { isAtTheBank } from '#payouts/at_the_bank'
import type { PayoutConfirmation } from '#payouts/payout_confirmations'
import { isPlatformOrderId } from '#core/order_ids'
import { bankReference, type OpenReceivable, type ReceiptClaim } from '#reconciliation/receipts'
import type { LineRow } from '#reconciliation/matching/line_row'

/*
 * The rules read only what candidates.ts fetched and touch no database: a
 * line's verdict is data (a Judgement), which settle.ts hands to the domain
 * it concerns.
 */

/** Statement times are minute-precise; slots are matched with this much slack. */
export const SLACK_SECONDS = 60

/** The note of a line no order can claim, by direction. */
export const NO_ORDER_NOTE = {
  credit: 'no open order',
  debit: 'debit without a payout reference',
} as const

/**
 * What the rules read of a payment order: the model, locked to be paid, or
 * the row of just these columns, read only to be judged (candidates.ts).
 */
export type RuleOrder = Pick<
  PaymentOrder,
  | 'id'
  | 'depositAccountId'
  | 'merchantId'
  | 'paymentReference'
  | 'platformOrderId'
  | 'transferAmount'
  | 'slotAmount'
  | 'status'
  | 'statusBeforeFreeze'
  | 'orderAt'
  | 'expireAt'
>

/**
 * Everything the rules read about the orders that could claim some lines,
 * fetched for all of them at once (`findCandidates`). One line or a
 * thousand: the same queries, then `judgeLine` per line in memory.
 */
export interface Candidates<Order extends RuleOrder = PaymentOrder> {
  /** Payment orders by `account|reference` (payment_reference or platform_order_id). */
  byReference: Map<string, Order>
  /** Open or frozen payment orders by `account|slot_amount` (unique per account). */
  bySlot: Map<string, Order>
  /** Line id → platform_order_id of the most recent expired order it pays late. */
  expired: Map<number, string>
  /** Bulk-file payouts by platform_order_id. */
  payouts: Map<string, PayoutOrder>
  /**
   * Open receivables of the lines' accounts: payments credited before their
   * line arrived, waiting for it (one is cleared by one line at most).
   */
  receivables: OpenReceivable[]
  /**
   * Open transfers out a debit line could confirm: payouts named by the
   * lines that succeeded without their line, returns to payers waiting on
   * the lines' accounts.
   */
  confirmations: PayoutConfirmation[]
  /** The claims holding the credit lines' bank transfers, by transfer (any account). */
  transfers?: Map<string, ReceiptClaim & { platformOrderId: string | null }>
}

/** What the rules decide for one line. */
export type Judgement<Order extends RuleOrder = PaymentOrder> =
  | { result: 'matched'; order: Order }
  | { result: 'matched'; payout: PayoutOrder }
  /** The line of a payment credited before it: it clears the receivable. */
  | { result: 'matched'; receivable: OpenReceivable }
  /** The debit of a transfer already made (a payout, a return): it confirms it. */
  | { result: 'matched'; confirmation: PayoutConfirmation; payout?: PayoutOrder }
  | {
      result: 'unmatched' | 'late'
      note: string
      /** The order the verdict is about (its state decided it), if any. */
      order?: Order
    }

export function isPayoutReference(reference: string | null): reference is string {
  return !!reference && (isPlatformOrderId(reference, 'W') || isPlatformOrderId(reference, 'M'))
}

/** The key of the candidates' maps: `account|value`. */
export const candidateKey = (accountId: number, value: string | number) => `${accountId}|${value}`

/**
 * The matching rules (docs/reconciliation.md, "Matching rules"), one line at
 * a time, on orders already read:
 *
 * Credit lines first clear the receivable of a payment credited before its
 * line arrived (named by the slip's transaction reference, or by the order's
 * reference); then they pay the open payment order named by their
 * reference, or else the open order on this account holding the same
 * transfer_amount whose slot (order time to expiry, ±1 minute) covers the
 * line's time, or else the one receivable expecting that amount at that
 * time. A payment for an order that has already expired is "late"; anything
 * else (two claimants included) waits in "unmatched" for an operator. Debit
 * lines confirm bulk-file payouts named by their reference; a credit naming
 * a payout is that transfer coming back. Either must carry the payout's
 * amount, or it waits in "unmatched" for an operator.
 */
export function judgeLine<Order extends RuleOrder>(
  line: LineRow,
  candidates: Candidates<Order>
): Judgement<Order> {
  if (isPayoutReference(line.reference)) {
    const payout = candidates.payouts.get(line.reference)
    const sent = payout && line.direction === 'debit' && sentWithoutLine(payout, candidates)
    if (sent) {
      return sent.amount === line.amount
        ? { result: 'matched', confirmation: sent, payout }
        : { result: 'unmatched', note: `${line.reference}: sent ${sent.amount} satang` }
    }
    if (!payout || !isAtTheBank(payout)) {
      return { result: 'unmatched', note: `${line.reference}: no pending bulk-file payout` }
    }
    // The bank's file sends the payout's amount, and a return brings it back whole:
    // another amount is not this transfer (a 1.00 credit must not refund 1,000.00).
    if (line.amount !== payout.amount) {
      return {
        result: 'unmatched',
        note:
          line.direction === 'debit'
            ? `${line.reference}: the bank file sends ${payout.amount} satang`
            : `${line.reference}: a return of ${payout.amount} satang is expected`,
      }
    }
    return { result: 'matched', payout }
  }
  if (line.direction === 'debit') {
    // A return to a payer, made in the bank's portal: its debit carries no reference of ours.
    const returns = candidates.confirmations.filter(
      (confirmation) =>
        confirmation.path === 'return' &&
        confirmation.statementLineId === null &&
        confirmation.depositAccountId === line.deposit_account_id &&
        confirmation.amount === line.amount
    )
    if (returns.length === 1) return { result: 'matched', confirmation: returns[0] }
    if (returns.length > 1) {
      return {
        result: 'unmatched',
        note: `the returns of lines ${returns.map((r) => `#${r.returnedLineId}`).join(' and ')} both send this amount`,
      }
    }
    return { result: 'unmatched', note: NO_ORDER_NOTE.debit }
  }

  const taken = transferTakenElsewhere(line, candidates)
  if (taken) return { result: 'unmatched', note: taken }

  const named = namedOrder(line, candidates)
  const owed = receivableNamedBy(line, candidates)
  if (owed) return clearing(line, owed)

  const order = named ?? slotHolder(line, candidates)
  if (!order) {
    const expected = receivablesExpecting(line, candidates)
    if (expected.length === 1) return clearing(line, expected[0])
    if (expected.length > 1) {
      return {
        result: 'unmatched',
        note: `credited before their line, ${expected.map((r) => r.platformOrderId).join(' and ')} both expect this amount`,
      }
    }
    const expired = candidates.expired.get(line.id)
    return expired
      ? { result: 'late', note: expired }
      : { result: 'unmatched', note: NO_ORDER_NOTE.credit }
  }
  if (order.status === 'error') {
    // The customer paid an order that had already expired (error is final).
    return { result: 'late', note: order.platformOrderId, order }
  }
  if (order.status !== 'open') {
    return { result: 'unmatched', note: `${order.platformOrderId} is ${order.status}`, order }
  }
  if (order.transferAmount !== line.amount) {
    return {
      result: 'unmatched',
      note: `${order.platformOrderId} expects ${order.transferAmount} satang`,
      order,
    }
  }
  if (!named) {
    // The slot's order and a receivable both wait for this amount at this time: an operator decides.
    const expected = receivablesExpecting(line, candidates)
    if (expected.length > 0) {
      return {
        result: 'unmatched',
        note: `${order.platformOrderId} and ${expected.map((r) => r.platformOrderId).join(', ')} (credited before their line) both expect this amount`,
        order,
      }
    }
  }
  return { result: 'matched', order }
}

/**
 * The payment order a credit line is judged against (`judgeLine`): the one
 * its reference names, else the one whose slot holds its amount at its time.
 */
export function orderOf<Order extends RuleOrder>(line: LineRow, candidates: Candidates<Order>) {
  return namedOrder(line, candidates) ?? slotHolder(line, candidates)
}

/** The payout's open transfer (it succeeded, its debit line has not come), if any. */
function sentWithoutLine(payout: PayoutOrder, candidates: Candidates<RuleOrder>) {
  if (payout.status !== 'success') return undefined
  return candidates.confirmations.find(
    (confirmation) =>
      confirmation.payoutOrderId === payout.id && confirmation.statementLineId === null
  )
}

function namedOrder<Order extends RuleOrder>(line: LineRow, candidates: Candidates<Order>) {
  return line.reference
    ? candidates.byReference.get(candidateKey(line.deposit_account_id, line.reference))
    : undefined
}

/**
 * The open receivable the line names, whatever its amount: by the slip's
 * transaction reference, or by the reference of the order credited.
 */
export function receivableNamedBy(line: LineRow, candidates: Candidates<RuleOrder>) {
  const named = namedOrder(line, candidates)
  return (
    receivableByTransRef(line, candidates) ??
    (named ? receivableOf(named.id, line, candidates) : undefined)
  )
}

/**
 * Why the line's bank transfer is no longer anyone's to take: another
 * claim holds it (a line of it on another account, or a slip's receivable
 * there), unless it is the receivable on the line's own account that the
 * line clears.
 */
function transferTakenElsewhere(line: LineRow, candidates: Candidates<RuleOrder>) {
  const transfer = bankReference(line)
  const holder = transfer ? candidates.transfers?.get(transfer) : undefined
  if (!holder || holder.statementLineId === line.id) return undefined
  if (holder.statementLineId === null && holder.depositAccountId === line.deposit_account_id) {
    return undefined
  }
  const of = holder.platformOrderId ? ` of ${holder.platformOrderId}` : ''
  return `the transfer ${transfer} was already claimed (claim ${holder.id}, ${holder.path}${of})`
}

/** A receivable the line names: it clears it when it brings the amount expected. */
function clearing(line: LineRow, receivable: OpenReceivable): Judgement<never> {
  if (receivable.expectedAmount !== line.amount) {
    return {
      result: 'unmatched',
      note: `${receivable.platformOrderId} was credited before its line, for ${receivable.expectedAmount} satang`,
    }
  }
  return { result: 'matched', receivable }
}

const stillOpen = (receivable: OpenReceivable) => receivable.statementLineId === null

/** The open receivable on the line's account that a slip named with the line's transaction reference. */
function receivableByTransRef(line: LineRow, candidates: Candidates<RuleOrder>) {
  if (!line.trans_ref) return undefined
  return candidates.receivables.find(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.depositAccountId === line.deposit_account_id &&
      receivable.transRef === line.trans_ref
  )
}

/**
 * The open receivable of an order (on the line's account), unless its slip
 * named another bank transfer than the line's: that receivable waits for
 * its own line.
 */
function receivableOf(orderId: number, line: LineRow, candidates: Candidates<RuleOrder>) {
  const transfer = bankReference(line)
  return candidates.receivables.find(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.paymentOrderId === orderId &&
      receivable.depositAccountId === line.deposit_account_id &&
      (receivable.transRef === null || transfer === null || receivable.transRef === transfer)
  )
}

/**
 * The open receivables on the line's account that expect its amount at its
 * time (their transfer's window, from the slip or the order), and that no
 * slip transaction names (those wait for their own line).
 */
function receivablesExpecting(line: LineRow, candidates: Candidates<RuleOrder>) {
  const at = line.line_at.getTime()
  return candidates.receivables.filter(
    (receivable) =>
      stillOpen(receivable) &&
      receivable.depositAccountId === line.deposit_account_id &&
      receivable.expectedAmount === line.amount &&
      (receivable.transRef === null || line.trans_ref === null) &&
      receivable.expectedFrom !== null &&
      receivable.expectedTo !== null &&
      receivable.expectedFrom.getTime() <= at &&
      at <= receivable.expectedTo.getTime()
  )
}

/**
 * The order on the line's account holding the line's amount as its
 * transfer_amount slot (unique per account: an open or frozen order), whose
 * slot covers the line's time: order_at − slack ≤ line time ≤ expire_at + slack.
 */
function slotHolder<Order extends RuleOrder>(line: LineRow, candidates: Candidates<Order>) {
  const order = candidates.bySlot.get(candidateKey(line.deposit_account_id, line.amount))
  if (!order || order.slotAmount !== line.amount) return undefined
  if (order.depositAccountId !== line.deposit_account_id) return undefined
  const at = line.line_at.getTime()
  const slack = SLACK_SECONDS * 1000
  if (order.orderAt.toMillis() > at + slack) return undefined
  if (order.expireAt.toMillis() < at - slack) return undefined
  return order
}
