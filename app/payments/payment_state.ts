import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import Merchant from '#merchants/models/merchant'
import { postLedgerTransaction, postLedgerTransactions } from '#ledger/ledger'
import { paymentPaidPosting, paymentSettledPosting, type CreditSource } from '#ledger/recipes'
import { writePaymentCallback } from '#callbacks/outbox'
import { recordOrderEvent, recordOrderEvents } from '#core/order_events'
import { releaseSlot, releaseSlots } from '#payments/deposit_slots'
import { leavingReview } from '#payments/review_flag'
import type { Actor } from '#core/actor'
import type { PaymentStatus } from '#payments/payment_status'

export { PAYMENT_STATUSES, type PaymentStatus } from '#payments/payment_status'

/**
 * Payment order state machine (spec: Payment order status) over the statuses
 * of payment_status.ts. settled_paid and error are terminal. freeze is an
 * operator's manual-review hold: it can be entered from any non-terminal
 * state and left back to the state it came from, or, for an order frozen
 * while open, to a final decision.
 */
export const PAYMENT_TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  open: ['unsettled_paid', 'error', 'freeze'],
  unsettled_paid: ['settled_paid', 'freeze'],
  freeze: ['open', 'unsettled_paid', 'error'],
  settled_paid: [],
  error: [],
}

export class IllegalTransitionError extends Error {
  constructor(
    public from: PaymentStatus,
    public to: PaymentStatus
  ) {
    super(`A payment order cannot go from ${from} to ${to}`)
  }
}

/**
 * Whether `order` may go to `to`: the table, and for a frozen order the state
 * it was frozen in (a payment frozen after it was paid can only return to
 * unsettled_paid; one frozen while open can be paid, failed or reopened).
 */
export function canTransition(
  order: Pick<PaymentOrder, 'status' | 'statusBeforeFreeze'>,
  to: PaymentStatus
) {
  if (!PAYMENT_TRANSITIONS[order.status].includes(to)) return false
  if (order.status !== 'freeze') return true
  return order.statusBeforeFreeze === 'open' ? to !== 'freeze' : to === order.statusBeforeFreeze
}

/** The decisions an operator may take on a payment, as the order page offers them. */
export interface OperatorActions {
  freeze: boolean
  unfreeze: boolean
  markPaid: boolean
}

/**
 * What the state table allows an operator to do to `order` now, so pages ask
 * the domain instead of repeating status rules (the actions check again
 * under the row lock): freeze is a transition to freeze; unfreeze is the
 * transition back to the state it was frozen in; mark paid is the
 * transition to unsettled_paid of an order whose money is not credited yet
 * (open, or frozen while open: a frozen paid order going back to
 * unsettled_paid is its unfreeze, not a payment).
 */
export function operatorActionsFor(
  order: Pick<PaymentOrder, 'status' | 'statusBeforeFreeze'>
): OperatorActions {
  const frozenFrom = order.status === 'freeze' ? order.statusBeforeFreeze : null
  const credited = (order.status === 'freeze' ? frozenFrom : order.status) === 'unsettled_paid'
  return {
    freeze: canTransition(order, 'freeze'),
    unfreeze: frozenFrom !== null && canTransition(order, frozenFrom),
    markPaid: canTransition(order, 'unsettled_paid') && !credited,
  }
}

export function assertPaymentTransition(
  order: Pick<PaymentOrder, 'status' | 'statusBeforeFreeze'>,
  to: PaymentStatus
) {
  if (!canTransition(order, to)) throw new IllegalTransitionError(order.status, to)
}

export interface PaymentChange {
  to: PaymentStatus
  actor: Actor
  /** Why, in words: shown on the order's timeline. */
  reason?: string | null
  /** open → unsettled_paid: when the customer paid. */
  paidAt?: DateTime
  /**
   * open → unsettled_paid: where the money comes from (a claimed statement
   * line: clearing; a line still to come: receivable) and what the bank
   * received (default transfer_amount).
   */
  receipt?: { source: CreditSource; received: number }
  /** → error: the machine-readable cause ("expired", "rejected"). */
  errorReason?: string
  now?: DateTime
}

/**
 * The one way a payment order changes status, inside the caller's transaction
 * with the order row locked: checks the state table, applies what the new
 * status means (ledger postings, the merchant's callback, the transfer_amount
 * slot), saves the order and appends its event.
 *
 * - open → unsettled_paid: amount − fee to unsettle_balance, the fee to fee
 *   revenue, the satang adjustment to its own account, out of the receipt
 *   the caller claimed (or the receivable it opened); PAID callback. The
 *   caller writes the claim with the posting's id, which this returns.
 * - unsettled_paid → settled_paid: the credit less the fee from
 *   unsettle_balance to balance.
 * - open → error: the slot is freed; FAIL callback.
 * - freeze and back: the status only (the money stays where it is).
 */
export async function transitionPayment(
  trx: TransactionClientContract,
  order: PaymentOrder,
  change: PaymentChange
): Promise<{ paidPostingId: number | null; credited: number | null }> {
  let paid: { postingId: number; credited: number } | null = null
  const from = order.status
  assertPaymentTransition(order, change.to)
  const now = change.now ?? DateTime.utc()
  const effectiveFrom = from === 'freeze' ? order.statusBeforeFreeze : from

  if (change.to === 'freeze') {
    order.statusBeforeFreeze = from
  } else if (from === 'freeze') {
    order.statusBeforeFreeze = null
  }

  if (change.to === 'unsettled_paid' && effectiveFrom === 'open') {
    // Money reaches a merchant only from a receipt claimed or a receivable opened by the caller.
    if (!change.receipt) throw new Error(`${order.platformOrderId}: paid without a receipt`)
    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    paid = await postPaid(trx, order, merchant, change.receipt)
    order.paidAt = change.paidAt ?? now
    await releaseHeldSlot(trx, order)
    await writePaymentCallback(trx, order, merchant, 'PAID')
  } else if (change.to === 'settled_paid') {
    const posting = paymentSettledPosting({
      merchantId: order.merchantId,
      platformOrderId: order.platformOrderId,
      net: (order.paidAmount ?? order.amount) - (order.fee ?? 0),
    })
    if (posting) await postLedgerTransaction(trx, posting)
    order.settledAt = now
  } else if (change.to === 'error') {
    order.errorReason = change.errorReason ?? 'rejected'
    await releaseHeldSlot(trx, order)
    order.closedAt = now
    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    await writePaymentCallback(trx, order, merchant, 'FAIL', now.toJSDate())
  }

  order.status = change.to
  await order.useTransaction(trx).save()
  await recordOrderEvent(trx, paymentEvent(order, from, change))
  return { paidPostingId: paid?.postingId ?? null, credited: paid?.credited ?? null }
}

/**
 * One order of a batch paid by statement lines, as takePayment left it:
 * changed in memory, written by transitionPayments.
 */
export interface PaymentTaken {
  order: PaymentOrder
  /** The amount the order held as its slot, released when written. */
  slotAmount: number | null
  paidAt: DateTime
  reason: string
}

/**
 * open → unsettled_paid for one order of a batch, in memory: the state table
 * is checked here and the order changed as transitionPayment changes it, so
 * that the next line of the batch judged against it finds it paid and its
 * transfer_amount slot gone. Paid by the bank itself, it no longer awaits
 * review.
 */
export function takePayment(
  order: PaymentOrder,
  change: { paidAt: DateTime; reason: string }
): PaymentTaken {
  assertPaymentTransition(order, 'unsettled_paid')
  // A frozen order is never paid in a batch: only open → unsettled_paid posts the payment.
  if (order.status !== 'open') throw new IllegalTransitionError(order.status, 'unsettled_paid')
  const taken: PaymentTaken = {
    order,
    slotAmount: order.slotAmount,
    paidAt: change.paidAt,
    reason: order.awaitingReview ? leavingReview(change.reason) : change.reason,
  }
  order.awaitingReview = false
  order.status = 'unsettled_paid'
  order.slotAmount = null
  order.paidAt = change.paidAt
  return taken
}

/**
 * transitionPayment's open → unsettled_paid for many orders at once (a
 * statement import pays thousands), in a fixed number of statements plus
 * the callback rows, in the caller's transaction with the orders locked by
 * the caller: the slots released, each order's PAID callback row, the
 * orders' new state in one UPDATE and their events, and last the
 * payment_paid postings (the recipe of one order, through
 * postLedgerTransactions): the merchants' balance rows are locked from then
 * to the commit, so the caller writes after it only its claims, with the
 * postings this returns (in the order of `payments`). The receipt is the
 * statement line the caller claims, for transfer_amount. Nothing is written
 * twice: a posting key or a callback row already there, or an order no
 * longer open, fails or skips as in the one-order path, and the caller rolls
 * back.
 */
export async function transitionPayments(
  trx: TransactionClientContract,
  payments: PaymentTaken[],
  change: { to: 'unsettled_paid'; actor: Actor; now?: DateTime }
): Promise<Array<{ paidPostingId: number; credited: number }>> {
  if (payments.length === 0) return []
  const merchantIds = [...new Set(payments.map(({ order }) => order.merchantId))]
  const merchants = new Map(
    (await Merchant.query({ client: trx }).whereIn('id', merchantIds)).map((merchant) => [
      merchant.id,
      merchant,
    ])
  )
  const merchantOf = (order: PaymentOrder) => {
    const merchant = merchants.get(order.merchantId)
    if (!merchant) throw new Error(`Payment order ${order.id}: no merchant ${order.merchantId}`)
    return merchant
  }

  const credits = payments.map(({ order }) =>
    paidCredit(order, merchantOf(order), { source: 'clearing', received: order.transferAmount })
  )
  await releaseSlots(
    trx,
    payments.flatMap(({ order, slotAmount }) =>
      slotAmount === null ? [] : [{ accountId: order.depositAccountId, slotAmount }]
    )
  )
  for (const { order } of payments) {
    await writePaymentCallback(trx, order, merchantOf(order), 'PAID')
  }

  const now = change.now ?? DateTime.utc()
  const ids = payments.map(({ order }) => order.id)
  const cases = `CASE id ${payments.map(() => 'WHEN ? THEN ?').join(' ')} END`
  const [result] = await trx.rawQuery(
    `UPDATE payment_orders SET status = 'unsettled_paid', awaiting_review = 0, slot_amount = NULL,
       fee = ${cases}, paid_amount = ${cases}, paid_at = ${cases}, updated_at = ?
     WHERE id IN (${ids.map(() => '?').join(', ')}) AND status = 'open'`,
    [
      ...payments.flatMap(({ order }) => [order.id, order.fee!]),
      ...payments.flatMap(({ order }) => [order.id, order.paidAmount!]),
      ...payments.flatMap(({ order, paidAt }) => [order.id, paidAt.toJSDate()]),
      now.toJSDate(),
      ...ids,
    ]
  )
  // The caller holds the orders locked and found them open.
  if (Number(result.affectedRows) !== payments.length) {
    throw new Error(`Paid ${result.affectedRows} of ${payments.length} orders: not all were open`)
  }
  for (const { order } of payments) order.updatedAt = now

  await recordOrderEvents(
    trx,
    payments.map(({ order, reason }) =>
      paymentEvent(order, 'open', { to: change.to, actor: change.actor, reason })
    )
  )

  // Last: the merchants' balance rows stay locked from here to the commit.
  const postingIds = await postLedgerTransactions(
    trx,
    credits.map(({ posting }) => posting)
  )
  return credits.map((credit, index) => ({
    paidPostingId: postingIds[index],
    credited: credit.credited,
  }))
}

/** The order's event for a change, as its timeline shows it. */
function paymentEvent(
  order: PaymentOrder,
  from: PaymentStatus,
  change: Pick<PaymentChange, 'to' | 'actor' | 'reason'>
) {
  return {
    orderType: 'payment' as const,
    orderId: order.id,
    from,
    to: change.to,
    actor: change.actor,
    reason: change.reason,
  }
}

/** Frees the order's transfer_amount (its slot_amount and its deposit_slots row) for other orders. */
async function releaseHeldSlot(trx: TransactionClientContract, order: PaymentOrder) {
  if (order.slotAmount === null) return
  await releaseSlot(trx, order.depositAccountId, order.slotAmount)
  order.slotAmount = null
}

async function postPaid(
  trx: TransactionClientContract,
  order: PaymentOrder,
  merchant: Merchant,
  receipt: PaymentChange['receipt']
) {
  const credit = paidCredit(order, merchant, receipt)
  const postingId = await postLedgerTransaction(trx, credit.posting)
  return { postingId, credited: credit.credited }
}

/**
 * The payment_paid posting of an order (the ledger's recipe), for one order
 * or a batch; the order takes its fee and what it credits before the fee.
 */
function paidCredit(order: PaymentOrder, merchant: Merchant, receipt: PaymentChange['receipt']) {
  const credit = paymentPaidPosting(order, merchant.paymentFeeRateBps, receipt ?? {})
  order.fee = credit.fee
  order.paidAmount = credit.creditedBase
  return credit
}
