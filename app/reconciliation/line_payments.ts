import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Merchant from '#merchants/models/merchant'
import type PaymentOrder from '#payments/models/payment_order'
import { assertPaymentTransition, IllegalTransitionError } from '#payments/payment_state'
import { writePaymentCallback } from '#callbacks/outbox'
import { releaseSlots } from '#payments/deposit_slots'
import { postLedgerTransactions } from '#ledger/ledger'
import { paymentPaidPosting, receivableClearedPosting } from '#ledger/recipes'
import { recordOrderEvents } from '#core/order_events'
import { SYSTEM } from '#core/actor'
import { clearReceivables, insertClaims, type OpenReceivable } from '#reconciliation/receipts'
import type { LineRow } from '#reconciliation/match_line'

/**
 * Payment orders paid by statement lines, many in one transaction: what
 * `transitionPayment` does for open → unsettled_paid, for every order at
 * once, in a fixed number of statements (plus the callback rows).
 *
 * `takePayment` decides one order as soon as the rules have matched its line
 * (the state table must allow it) and changes the order in memory, as a
 * transition does: the next line of the batch judged against it finds it paid
 * and its transfer_amount slot gone. `writePayments` then writes them all in
 * the caller's transaction, with the orders locked by the caller: the slots
 * released, each order's PAID callback row, the orders' new state and their
 * events, and last the `payment_paid` postings (`paymentPaidPosting`, the
 * ledger's rule, through `postLedgerTransactions`): the merchants' balance
 * rows are locked from then to the commit, so callers write these last too.
 * Nothing is written twice: a
 * posting key or a callback row already there, or an order no longer open,
 * fails or skips as in the one-order path, and the caller rolls back.
 */
export interface LinePayment {
  lineId: number
  order: PaymentOrder
  /** The amount the order held as its slot, released when written. */
  slotAmount: number | null
  paidAt: DateTime
  reason: string
}

/** Pays `order` in memory for the statement line: the transition is checked here. */
export function takePayment(line: { id: number; line_at: Date }, order: PaymentOrder): LinePayment {
  assertPaymentTransition(order, 'unsettled_paid')
  // A frozen order is never matched by a line: only open → unsettled_paid posts the payment.
  if (order.status !== 'open') throw new IllegalTransitionError(order.status, 'unsettled_paid')
  // Paid by the bank itself: nothing is left for an operator to review.
  const payment: LinePayment = {
    lineId: line.id,
    order,
    slotAmount: order.slotAmount,
    paidAt: DateTime.fromJSDate(line.line_at),
    reason: order.awaitingReview
      ? `statement line ${line.id}; no longer under review`
      : `statement line ${line.id}`,
  }
  order.awaitingReview = false
  order.status = 'unsettled_paid'
  order.slotAmount = null
  order.paidAt = payment.paidAt
  return payment
}

/** Writes the payments `takePayment` decided, in the caller's transaction. */
export async function writePayments(trx: TransactionClientContract, payments: LinePayment[]) {
  if (payments.length === 0) return
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

  const credits = payments.map(({ order }) => {
    const credit = paymentPaidPosting(order, merchantOf(order).paymentFeeRateBps)
    order.fee = credit.fee
    order.paidAmount = credit.creditedBase
    return credit
  })
  await releaseSlots(
    trx,
    payments.flatMap(({ order, slotAmount }) =>
      slotAmount === null ? [] : [{ accountId: order.depositAccountId, slotAmount }]
    )
  )
  for (const { order } of payments) {
    await writePaymentCallback(trx, order, merchantOf(order), 'PAID')
  }

  const now = DateTime.utc()
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
    payments.map(({ order, reason }) => ({
      orderType: 'payment',
      orderId: order.id,
      from: 'open',
      to: 'unsettled_paid',
      actor: SYSTEM,
      reason,
    }))
  )

  // Last: the merchants' balance rows stay locked from here to the commit.
  const postingIds = await postLedgerTransactions(
    trx,
    credits.map(({ posting }) => posting)
  )
  // Each payment claims its line: the unique key refuses a line or an order
  // another decision took (the transaction rolls back).
  await insertClaims(
    trx,
    payments.map(({ lineId, order }, index) => ({
      depositAccountId: order.depositAccountId,
      statementLineId: lineId,
      path: 'match' as const,
      actor: SYSTEM,
      paymentOrderId: order.id,
      merchantId: order.merchantId,
      expectedAmount: order.transferAmount,
      credited: credits[index].credited,
      fee: credits[index].fee,
      ledgerTransactionId: postingIds[index],
      now: now.toJSDate(),
    }))
  )
}

/** A line that clears a receivable (a payment credited before it arrived). */
export interface ReceivableClearing {
  line: LineRow
  receivable: OpenReceivable
}

/**
 * Lines that arrived for payments credited before them, in the caller's
 * transaction (receivables locked by the caller): each claim takes its line,
 * the receipt settles the receivable (receivable_cleared: no merchant
 * balance moves, the merchant was credited when the payment was decided),
 * and the order's timeline says so.
 */
export async function writeReceivableClearings(
  trx: TransactionClientContract,
  clearings: ReceivableClearing[]
) {
  if (clearings.length === 0) return
  const now = new Date()
  await clearReceivables(
    trx,
    clearings.map(({ line, receivable }) => ({
      claimId: receivable.id,
      lineId: line.id,
      amount: line.amount,
    })),
    now
  )
  await postLedgerTransactions(
    trx,
    clearings.map(({ line, receivable }) =>
      receivableClearedPosting(line, { platformOrderId: receivable.platformOrderId! })
    )
  )
  await recordOrderEvents(
    trx,
    clearings.map(({ line, receivable }) => ({
      orderType: 'payment' as const,
      orderId: receivable.paymentOrderId!,
      from: receivable.orderStatus,
      to: receivable.orderStatus,
      actor: SYSTEM,
      reason: `statement line ${line.id} received: the payment credited before its line is backed by the bank`,
    }))
  )
}
