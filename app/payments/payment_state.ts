import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import Merchant from '#merchants/models/merchant'
import { postLedgerTransaction } from '#ledger/ledger'
import { paymentPaidPosting } from '#ledger/order_postings'
import { writePaymentCallback } from '#callbacks/outbox'
import { recordOrderEvent } from '#core/order_events'
import { releaseSlot } from '#payments/deposit_slots'
import type { Actor } from '#core/actor'

/**
 * Payment order state machine (spec: Payment order status). settled_paid and
 * error are terminal. freeze is an operator's manual-review hold: it can be
 * entered from any non-terminal state and left back to the state it came from,
 * or, for an order frozen while open, to a final decision.
 */
export const PAYMENT_STATUSES = [
  'open',
  'unsettled_paid',
  'settled_paid',
  'error',
  'freeze',
] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]

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
 *   revenue, the satang adjustment to its own account; PAID callback.
 * - unsettled_paid → settled_paid: amount − fee from unsettle_balance to balance.
 * - open → error: the slot is freed; FAIL callback.
 * - freeze and back: the status only (the money stays where it is).
 */
export async function transitionPayment(
  trx: TransactionClientContract,
  order: PaymentOrder,
  change: PaymentChange
) {
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
    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    await postPaid(trx, order, merchant)
    order.paidAt = change.paidAt ?? now
    await releaseHeldSlot(trx, order)
    await writePaymentCallback(trx, order, merchant, 'PAID')
  } else if (change.to === 'settled_paid') {
    const net = order.amount - (order.fee ?? 0)
    if (net !== 0) {
      await postLedgerTransaction(trx, {
        kind: 'payment_settled',
        reference: { type: 'payment', id: order.platformOrderId },
        legs: [
          { merchantId: order.merchantId, account: 'unsettled', amount: -net },
          { merchantId: order.merchantId, account: 'available', amount: net },
        ],
      })
    }
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
}

/** Frees the order's transfer_amount (its slot_amount and its deposit_slots row) for other orders. */
async function releaseHeldSlot(trx: TransactionClientContract, order: PaymentOrder) {
  if (order.slotAmount === null) return
  await releaseSlot(trx, order.depositAccountId, order.slotAmount)
  order.slotAmount = null
}

async function postPaid(trx: TransactionClientContract, order: PaymentOrder, merchant: Merchant) {
  const { fee, posting } = paymentPaidPosting(order, merchant.paymentFeeRateBps)
  await postLedgerTransaction(trx, posting)
  order.fee = fee
}
