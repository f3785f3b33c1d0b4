import PaymentOrder from '#payments/models/payment_order'
import type Merchant from '#merchants/models/merchant'
import { InvalidOrderInput, OrderNotFound } from '#core/refusals'
import { isPlatformOrderId } from '#core/order_ids'

/**
 * The merchant's own payment order by platform_order_id: InvalidOrderInput
 * for a missing or malformed id (or another marker), OrderNotFound when
 * missing or owned by another merchant (the two are indistinguishable to the
 * caller).
 */
export async function findMerchantPayment(merchant: Merchant, platformOrderId: unknown) {
  if (platformOrderId === undefined || platformOrderId === null || platformOrderId === '') {
    throw new InvalidOrderInput('platform_order_id is required')
  }
  if (!isPlatformOrderId(platformOrderId, 'P')) {
    throw new InvalidOrderInput(
      'platform_order_id must be 24 characters with marker P at index 3 (a payment order)'
    )
  }
  const order = await PaymentOrder.query()
    .where('platform_order_id', platformOrderId)
    .where('merchant_id', merchant.id)
    .first()
  if (!order) throw new OrderNotFound(`payment order ${platformOrderId} not found`)
  return order
}
