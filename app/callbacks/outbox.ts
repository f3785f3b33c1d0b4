import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import type PayoutOrder from '#payouts/models/payout_order'
import type Merchant from '#merchants/models/merchant'
import { amountJson } from '#core/money'
import { signCallbackBody } from '#callbacks/signing'
import { enqueueAfterCommit } from '#callbacks/enqueue'

export type PaymentCallbackStatus = 'PAID' | 'FAIL'

/**
 * Writes the payment callback for a final state into the outbox, inside the
 * caller's transaction. The body is built here, once (spec: Payment callback),
 * and signed here, once, with the merchant's current secret; the worker posts
 * exactly these bytes with this signature. The unique key (order, status)
 * makes a retried state change write nothing. No row when the merchant gave no
 * notify_url. The delivery job is enqueued after the transaction commits
 * (never for a rolled-back row). Returns the new row id, or null.
 */
export async function writePaymentCallback(
  trx: TransactionClientContract,
  order: PaymentOrder,
  merchant: Merchant,
  status: PaymentCallbackStatus,
  at: Date = new Date()
) {
  if (!order.notifyUrl) return null
  const body = JSON.stringify({
    merchant_id: merchant.merchantId,
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    mode: 'PAYMENT',
    // What was credited before the fee: the order's amount, or what the bank
    // received when an operator credited another amount (docs/decisions.md).
    amount: amountJson(status === 'PAID' ? (order.paidAmount ?? order.amount) : order.amount),
    status,
    timestamp: at.getTime(),
  })
  return insertOutboxRow(trx, merchant, {
    orderType: 'payment',
    orderId: order.id,
    platformOrderId: order.platformOrderId,
    status,
    notifyUrl: order.notifyUrl,
    body,
    at,
  })
}

export type PayoutCallbackStatus = 'SUCCESS' | 'FAIL'

/**
 * Withdraw and settlement callbacks share one shape and mode WITHDRAW; the
 * marker at index 3 of platform_order_id tells them apart (spec: Withdraw /
 * settlement callback). One row per order and final status; signed and
 * enqueued as payment callbacks are.
 */
export async function writePayoutCallback(
  trx: TransactionClientContract,
  order: PayoutOrder,
  merchant: Merchant,
  status: PayoutCallbackStatus,
  at: Date = new Date()
) {
  if (!order.notifyUrl) return null
  const body = JSON.stringify({
    merchant_id: merchant.merchantId,
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    mode: 'WITHDRAW',
    bank: order.bank,
    account_no: order.accountNo,
    account_name: order.accountName,
    amount: amountJson(order.amount),
    status,
    timestamp: at.getTime(),
  })
  return insertOutboxRow(trx, merchant, {
    orderType: order.kind,
    orderId: order.id,
    platformOrderId: order.platformOrderId,
    status,
    notifyUrl: order.notifyUrl,
    body,
    at,
  })
}

async function insertOutboxRow(
  trx: TransactionClientContract,
  merchant: Merchant,
  row: {
    orderType: 'payment' | 'withdraw' | 'settlement'
    orderId: number
    platformOrderId: string
    status: string
    notifyUrl: string
    body: string
    at: Date
  }
): Promise<number | null> {
  const signature = await signCallbackBody(merchant.id, row.body, trx)
  const [result] = await trx.rawQuery(
    `INSERT IGNORE INTO callback_outbox
       (merchant_id, order_type, order_id, platform_order_id, status, notify_url, body, signature,
        state, attempts, series, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, 0, ?)`,
    [
      merchant.id,
      row.orderType,
      row.orderId,
      row.platformOrderId,
      row.status,
      row.notifyUrl,
      row.body,
      signature,
      row.at,
    ]
  )
  // Ignored: this order already has its callback for this status.
  if (!Number(result.affectedRows)) return null
  const id = Number(result.insertId)
  enqueueAfterCommit(trx, { id, platformOrderId: row.platformOrderId, status: row.status }, 0)
  return id
}
