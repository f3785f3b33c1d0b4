import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#models/payment_order'
import type PayoutOrder from '#models/payout_order'
import type Merchant from '#models/merchant'
import { amountJson } from '#services/money'

export type PaymentCallbackStatus = 'PAID' | 'FAIL'

/**
 * Writes the payment callback for a final state into the outbox, inside the
 * caller's transaction. The body is built here, once (spec: Payment callback);
 * the unique key (order, status) makes a retried state change write nothing.
 * No row when the merchant gave no notify_url.
 */
export async function writePaymentCallback(
  trx: TransactionClientContract,
  order: PaymentOrder,
  merchant: Merchant,
  status: PaymentCallbackStatus,
  at: Date = new Date()
) {
  if (!order.notifyUrl) return
  const body = JSON.stringify({
    merchant_id: merchant.merchantId,
    platform_order_id: order.platformOrderId,
    merchant_order_id: order.merchantOrderId,
    mode: 'PAYMENT',
    amount: amountJson(order.amount),
    status,
    timestamp: at.getTime(),
  })
  await trx.rawQuery(
    `INSERT IGNORE INTO callback_outbox
       (merchant_id, order_type, order_id, platform_order_id, status, notify_url, body, state, attempts, created_at)
     VALUES (?, 'payment', ?, ?, ?, ?, ?, 'pending', 0, ?)`,
    [merchant.id, order.id, order.platformOrderId, status, order.notifyUrl, body, at]
  )
}

export type PayoutCallbackStatus = 'SUCCESS' | 'FAIL'

/**
 * Withdraw and settlement callbacks share one shape and mode WITHDRAW; the
 * marker at index 3 of platform_order_id tells them apart (spec: Withdraw /
 * settlement callback). One row per order and final status.
 */
export async function writePayoutCallback(
  trx: TransactionClientContract,
  order: PayoutOrder,
  merchant: Merchant,
  status: PayoutCallbackStatus,
  at: Date = new Date()
) {
  if (!order.notifyUrl) return
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
  await trx.rawQuery(
    `INSERT IGNORE INTO callback_outbox
       (merchant_id, order_type, order_id, platform_order_id, status, notify_url, body, state, attempts, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)`,
    [merchant.id, order.kind, order.id, order.platformOrderId, status, order.notifyUrl, body, at]
  )
}
