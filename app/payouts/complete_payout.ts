import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PayoutOrder from '#models/payout_order'
import Merchant from '#models/merchant'
import { assertPayoutTransition, isFinalPayoutStatus } from '#payouts/payout_state'
import { postLedgerTransaction } from '#ledger/ledger'
import { writePayoutCallback } from '#services/callback_outbox'

export type PayoutOutcome =
  | { success: true }
  | { success: false; reason: string; status?: 'failed' | 'error' | 'rejected' | 'cancelled' }

/**
 * The bank's final answer for a payout, in one transaction: the status, the
 * money (success consumes the hold, failure returns it; after a released hold,
 * success debits balance and failure moves nothing) and one callback row.
 * Idempotent: a final order is left as it is and false is returned.
 */
export async function completePayout(
  payoutOrderId: number,
  outcome: PayoutOutcome,
  now = DateTime.utc(),
  client?: TransactionClientContract
) {
  // Inside the caller's transaction when given (a statement line and the
  // payout it settles commit together), else in its own.
  const run = <T>(work: (trx: TransactionClientContract) => Promise<T>) =>
    client ? work(client) : db.transaction(work)
  return run(async (trx) => {
    const order = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (!order || isFinalPayoutStatus(order.status)) return false
    const target = outcome.success ? 'success' : (outcome.status ?? 'failed')
    assertPayoutTransition(order.status, target)

    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    if (outcome.success) {
      await settleSuccess(trx, order, merchant)
    } else {
      await settleFailure(trx, order, merchant)
      order.failureReason = outcome.reason
    }
    order.status = target
    order.doneAt = now
    await order.useTransaction(trx).save()
    await writePayoutCallback(
      trx,
      order,
      merchant,
      outcome.success ? 'SUCCESS' : 'FAIL',
      now.toJSDate()
    )
    return true
  })
}

async function settleSuccess(
  trx: TransactionClientContract,
  order: PayoutOrder,
  merchant: Merchant
) {
  // After the timeout returned the hold, the money leaves balance instead,
  // even if that takes it below zero: the bank has already paid.
  const source = order.holdState === 'held' ? 'frozen' : 'available'
  const legs = [
    { merchantId: merchant.id, account: source, amount: -order.total } as const,
    { gateway: 'payout_clearing', amount: order.amount } as const,
  ]
  await postLedgerTransaction(trx, {
    kind: `${order.kind}_success`,
    reference: { type: order.kind, id: order.platformOrderId },
    legs: order.fee > 0 ? [...legs, { gateway: 'fee_revenue', amount: order.fee }] : legs,
  })
  if (order.holdState === 'released') {
    const balance = await trx
      .from('merchant_balances')
      .where('merchant_id', merchant.id)
      .select('balance')
      .firstOrFail()
    if (Number(balance.balance) < 0) {
      await trx.from('merchants').where('id', merchant.id).update({ negative_balance_flag: true })
    }
  }
  order.holdState = 'consumed'
}

async function settleFailure(
  trx: TransactionClientContract,
  order: PayoutOrder,
  merchant: Merchant
) {
  if (order.holdState === 'held') {
    await postLedgerTransaction(trx, {
      kind: `${order.kind}_hold_return`,
      reference: { type: order.kind, id: order.platformOrderId },
      legs: [
        { merchantId: merchant.id, account: 'frozen', amount: -order.total },
        { merchantId: merchant.id, account: 'available', amount: order.total },
      ],
    })
  }
  order.holdState = 'returned'
}

/**
 * The hold timeout: an order still open after the hold period gives its
 * amount + fee back to balance and stays open. Idempotent.
 */
export async function releasePayoutHold(payoutOrderId: number, now = DateTime.utc()) {
  return db.transaction(async (trx) => {
    const order = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (!order || isFinalPayoutStatus(order.status) || order.holdState !== 'held') return false
    if (order.holdExpiresAt > now) return false
    await postLedgerTransaction(trx, {
      kind: `${order.kind}_hold_release`,
      reference: { type: order.kind, id: order.platformOrderId },
      legs: [
        { merchantId: order.merchantId, account: 'frozen', amount: -order.total },
        { merchantId: order.merchantId, account: 'available', amount: order.total },
      ],
    })
    order.holdState = 'released'
    await order.useTransaction(trx).save()
    return true
  })
}
