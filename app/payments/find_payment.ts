import PaymentOrder from '#payments/models/payment_order'
import type Merchant from '#merchants/models/merchant'
import { GatewayError } from '#exceptions/gateway_error'
import { isPlatformOrderId } from '#core/order_ids'

/**
 * The merchant's own payment order by platform_order_id: 400 for a missing or
 * malformed id (or another marker), 404 when missing or owned by another
 * merchant (the two are indistinguishable to the caller).
 */
export async function findMerchantPayment(merchant: Merchant, platformOrderId: unknown) {
  if (platformOrderId === undefined || platformOrderId === null || platformOrderId === '') {
    throw GatewayError.invalidInputs('platform_order_id is required')
  }
  if (!isPlatformOrderId(platformOrderId, 'P')) {
    throw GatewayError.invalidInputs(
      'platform_order_id must be 24 characters with marker P at index 3 (a payment order)'
    )
  }
  const order = await PaymentOrder.query()
    .where('platform_order_id', platformOrderId)
    .where('merchant_id', merchant.id)
    .first()
  if (!order) throw GatewayError.notFound(`payment order ${platformOrderId} not found`)
  return order
}
