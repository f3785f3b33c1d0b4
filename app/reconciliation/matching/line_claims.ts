import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import { postLedgerTransactions } from '#ledger/ledger'
import { receivableClearedPosting } from '#ledger/recipes'
import { recordOrderEvents } from '#core/order_events'
import { SYSTEM } from '#core/actor'
import { clearReceivables, insertClaims, type OpenReceivable } from '#reconciliation/receipts'
import type { LineRow } from '#reconciliation/matching/line_row'

/*
 * What the lines of a batch claim, in the caller's transaction: the orders
 * they paid (transitionPayments wrote the payments) and the receivables of
 * payments credited before them.
 */

/** A statement line that paid an order, with what paying it posted. */
export interface PaidLine {
  lineId: number
  order: PaymentOrder
  paidPostingId: number
  credited: number
}

/**
 * Each payment claims its line, with its posting: the unique key refuses a
 * line or an order another decision took (the transaction rolls back).
 */
export async function claimPaidLines(trx: TransactionClientContract, paid: PaidLine[], now: Date) {
  if (paid.length === 0) return
  await insertClaims(
    trx,
    paid.map(({ lineId, order, paidPostingId, credited }) => ({
      depositAccountId: order.depositAccountId,
      statementLineId: lineId,
      path: 'match' as const,
      actor: SYSTEM,
      paymentOrderId: order.id,
      merchantId: order.merchantId,
      expectedAmount: order.transferAmount,
      credited,
      fee: order.fee!,
      ledgerTransactionId: paidPostingId,
      now,
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
