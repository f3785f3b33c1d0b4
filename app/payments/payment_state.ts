import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import Merchant from '#merchants/models/merchant'
import { postLedgerTransaction } from '#ledger/ledger'
import { paymentPaidPosting, paymentSettledPosting, type CreditSource } from '#ledger/recipes'
import { writePaymentCallback } from '#callbacks/outbox'
import { recordOrderEvent } from '#core/order_events'
import { releaseSlot } from '#payments/deposit_slots'
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
  await recordOrderEvent(trx, {
    orderType: 'payment',
    orderId: order.id,
    from,
    to: change.to,
    actor: change.actor,
    reason: change.reason,
  })
  return { paidPostingId: paid?.postingId ?? null, credited: paid?.credited ?? null }
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
  const credit = paymentPaidPosting(order, merchant.paymentFeeRateBps, receipt ?? {})
  const postingId = await postLedgerTransaction(trx, credit.posting)
  order.fee = credit.fee
  order.paidAmount = credit.creditedBase
  return { postingId, credited: credit.credited }
}
