import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { GatewayError } from '#exceptions/gateway_error'
import { isDuplicateKey } from '#core/db_retry'

/** Spec: merchant_order_id is unique per merchant for 7 days (payments; settlements). */
export const ORDER_ID_WINDOW_DAYS = 7

/**
 * Takes merchant_order_id within `scope` (payments share one; settlements have
 * their own), in the caller's transaction. A concurrent identical
 * insert waits on this transaction's lock of the primary key, then fails as a
 * duplicate (409) if we commit, or goes ahead if we roll back.
 */
export async function reserveMerchantOrderId(
  trx: TransactionClientContract,
  merchantId: number,
  merchantOrderId: string,
  scope: 'payment' | 'settlement' = 'payment'
) {
  const windowStart = DateTime.utc().minus({ days: ORDER_ID_WINDOW_DAYS }).toJSDate()
  const key = { merchant_id: merchantId, scope, merchant_order_id: merchantOrderId }
  // A reservation past the window is free again.
  await trx.from('merchant_order_ids').where(key).where('reserved_at', '<', windowStart).delete()
  try {
    await trx
      .insertQuery()
      .table('merchant_order_ids')
      .insert({ ...key, reserved_at: new Date() })
  } catch (error) {
    if (!isDuplicateKey(error)) throw error
    throw GatewayError.duplicateEntry(
      `merchant_order_id ${merchantOrderId} was already used in the last ${ORDER_ID_WINDOW_DAYS} days`
    )
  }
}
