import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PaymentOrder from '#models/payment_order'
import PayoutOrder from '#models/payout_order'
import Merchant from '#models/merchant'
import { assertPaymentTransition } from '#deposits/payment_state'
import { postLedgerTransaction } from '#ledger/ledger'
import { writePaymentCallback } from '#services/callback_outbox'
import { completePayout } from '#payouts/complete_payout'
import { isPlatformOrderId } from '#services/order_ids'
import { withDeadlockRetry } from '#services/db_retry'
import { rateFee } from '#services/money'

export type MatchResult = 'matched' | 'unmatched' | 'late' | 'skipped'

/** Statement times are minute-precise; slots are matched with this much slack. */
const SLACK_MS = 60_000

interface LineRow {
  id: number
  deposit_account_id: number
  line_at: Date
  direction: 'credit' | 'debit'
  amount: number
  reference: string | null
  status: string
}

/**
 * Matches one new statement line, in its own transaction with the line row
 * locked: a line is matched once even if two workers try, and the unique
 * (order_type, order_id) key stops an order from being settled by two lines.
 *
 * Credit lines pay the open payment order named by their reference, or else
 * the open order on this account holding the same transfer_amount whose slot
 * (order time to expiry, ±1 minute) covers the line's time. A payment for an
 * order that has already expired is "late"; anything else waits in
 * "unmatched" for an operator. Debit lines confirm bulk-file payouts named by
 * their reference; a credit naming a payout is that transfer coming back.
 */
export async function matchStatementLine(lineId: number): Promise<MatchResult> {
  // A deadlock rolls the whole attempt back; running it again is safe.
  return withDeadlockRetry(() => matchOnce(lineId))
}

/**
 * One transaction per line, the line row locked first: everything below sees
 * the line as it is and decides once.
 */
async function matchOnce(lineId: number): Promise<MatchResult> {
  return db.transaction(
    async (trx) => {
      const line = (await trx.from('statement_lines').where('id', lineId).forUpdate().first()) as
        LineRow | undefined
      if (!line || line.status !== 'new') return 'skipped'

      if (
        line.reference &&
        (isPlatformOrderId(line.reference, 'W') || isPlatformOrderId(line.reference, 'M'))
      ) {
        return settlePayoutLine(trx, line)
      }
      if (line.direction === 'debit') {
        return setLine(trx, line.id, 'unmatched', 'debit without a payout reference')
      }
      return payPaymentLine(trx, line)
    },
    { isolationLevel: 'read committed' }
  )
}

async function payPaymentLine(trx: TransactionClientContract, line: LineRow): Promise<MatchResult> {
  const amount = Number(line.amount)
  const order = await findPaymentFor(trx, line, amount)
  if (!order) {
    const expired = await findExpiredPaymentFor(trx, line, amount)
    return setLine(
      trx,
      line.id,
      expired ? 'late' : 'unmatched',
      expired?.platformOrderId ?? 'no open order'
    )
  }
  if (order.status === 'error') {
    // The customer paid an order that had already expired (error is final).
    return setLine(trx, line.id, 'late', order.platformOrderId)
  }
  if (order.status !== 'open') {
    return setLine(trx, line.id, 'unmatched', `${order.platformOrderId} is ${order.status}`)
  }
  if (order.transferAmount !== amount) {
    return setLine(
      trx,
      line.id,
      'unmatched',
      `${order.platformOrderId} expects ${order.transferAmount} satang`
    )
  }
  await payOrder(trx, order, line)
  await trx.from('statement_lines').where('id', line.id).update({
    status: 'matched',
    order_type: 'payment',
    order_id: order.id,
    matched_at: new Date(),
  })
  return 'matched'
}

async function findPaymentFor(trx: TransactionClientContract, line: LineRow, amount: number) {
  if (line.reference) {
    const byReference = await PaymentOrder.query({ client: trx })
      .where('deposit_account_id', line.deposit_account_id)
      .where((query) =>
        query
          .where('payment_reference', line.reference!)
          .orWhere('platform_order_id', line.reference!)
      )
      .forUpdate()
      .first()
    if (byReference) return byReference
  }
  // An open order holds its transfer_amount as slot_amount (unique per account).
  const at = new Date(line.line_at).getTime()
  const order = await PaymentOrder.query({ client: trx })
    .where('deposit_account_id', line.deposit_account_id)
    .where('slot_amount', amount)
    .forUpdate()
    .first()
  if (!order) return null
  const covers =
    order.orderAt.toMillis() - SLACK_MS <= at && at <= order.expireAt.toMillis() + SLACK_MS
  return covers ? order : null
}

async function findExpiredPaymentFor(
  trx: TransactionClientContract,
  line: LineRow,
  amount: number
) {
  const at = new Date(line.line_at)
  return PaymentOrder.query({ client: trx })
    .where('deposit_account_id', line.deposit_account_id)
    .where('transfer_amount', amount)
    .where('status', 'error')
    .where('order_at', '<=', new Date(at.getTime() + SLACK_MS))
    .orderBy('order_at', 'desc')
    .first()
}

/**
 * open → unsettled_paid: amount − fee to the merchant's unsettle_balance, the
 * fee to fee revenue, the satang adjustment to its own account; PAID callback.
 */
async function payOrder(trx: TransactionClientContract, order: PaymentOrder, line: LineRow) {
  const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
  const fee = rateFee(order.amount, merchant.paymentFeeRateBps)
  const adjustment = order.transferAmount - order.amount
  const legs: Parameters<typeof postLedgerTransaction>[1]['legs'] = [
    { gateway: 'deposit_clearing', amount: -order.transferAmount },
  ]
  if (order.amount - fee !== 0)
    legs.push({ merchantId: merchant.id, account: 'unsettled', amount: order.amount - fee })
  if (fee !== 0) legs.push({ gateway: 'fee_revenue', amount: fee })
  if (adjustment !== 0) legs.push({ gateway: 'slot_adjustment', amount: adjustment })
  await postLedgerTransaction(trx, {
    kind: 'payment_paid',
    reference: { type: 'payment', id: order.platformOrderId },
    legs,
  })

  assertPaymentTransition(order.status, 'unsettled_paid')
  order.status = 'unsettled_paid'
  order.fee = fee
  order.paidAt = DateTime.fromJSDate(new Date(line.line_at))
  order.slotAmount = null
  await order.useTransaction(trx).save()
  await writePaymentCallback(trx, order, merchant, 'PAID')
}

async function settlePayoutLine(
  trx: TransactionClientContract,
  line: LineRow
): Promise<MatchResult> {
  const order = await PayoutOrder.query({ client: trx })
    .where('platform_order_id', line.reference!)
    .forUpdate()
    .first()
  if (!order || order.connector !== 'bulk_file' || order.status !== 'pending') {
    return setLine(trx, line.id, 'unmatched', `${line.reference}: no pending bulk-file payout`)
  }
  const outcome =
    line.direction === 'debit'
      ? { success: true as const }
      : { success: false as const, reason: 'returned_by_bank' }
  await completePayout(order.id, outcome, DateTime.utc(), trx)
  await trx.from('statement_lines').where('id', line.id).update({
    status: 'matched',
    order_type: order.kind,
    order_id: order.id,
    matched_at: new Date(),
  })
  return 'matched'
}

async function setLine(
  trx: TransactionClientContract,
  lineId: number,
  status: 'unmatched' | 'late',
  note: string
) {
  await trx
    .from('statement_lines')
    .where('id', lineId)
    .update({ status, note: note.slice(0, 255) })
  return status
}
