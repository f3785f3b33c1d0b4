import { DuplicateMerchantOrderId } from '#core/refusals'
import { refuseUnless, refusedColumn, statement } from '#core/sql_batch'

/** Spec: merchant_order_id is unique per merchant for 7 days (payments; settlements). */
export const ORDER_ID_WINDOW_DAYS = 7

/**
 * The statement that takes merchant_order_id within `scope` (payments share
 * one; settlements have their own) in the caller's transaction: a new row,
 * or a reservation past the window taken over. A reservation still inside
 * the window refuses the statement (see asDuplicateMerchantOrderId). A
 * concurrent identical statement waits on this transaction's lock of the
 * primary key, then is refused if we commit, or goes ahead if we roll back.
 */
export function reserveMerchantOrderIdStatement(
  merchantId: number,
  merchantOrderId: string,
  scope: 'payment' | 'settlement' = 'payment'
) {
  const now = new Date()
  // Exact days of 86,400 s: the window is not a calendar period.
  const windowStart = new Date(now.getTime() - ORDER_ID_WINDOW_DAYS * 86_400_000)
  return statement(
    `INSERT INTO merchant_order_ids (merchant_id, scope, merchant_order_id, reserved_at)
     VALUES (?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE reserved_at = ${refuseUnless('reserved_at < ?', 'VALUES(reserved_at)')}`,
    [merchantId, scope, merchantOrderId, now, windowStart]
  )
}

/** The refusal of a reservation refused as a duplicate, or null for any other error. */
export function asDuplicateMerchantOrderId(error: unknown, merchantOrderId: string) {
  if (refusedColumn(error) !== 'reserved_at') return null
  return new DuplicateMerchantOrderId(
    `merchant_order_id ${merchantOrderId} was already used in the last ${ORDER_ID_WINDOW_DAYS} days`
  )
}
