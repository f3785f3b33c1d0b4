import PayoutOrder, { type PayoutKind } from '#payouts/models/payout_order'
import type Merchant from '#merchants/models/merchant'
import { GatewayError } from '#exceptions/gateway_error'
import { isPlatformOrderId } from '#core/order_ids'

/** The merchant's own withdraw (marker W) or settlement (marker M) order; 400 / 404 as the spec says. */
export async function findMerchantPayout(
  merchant: Merchant,
  kind: PayoutKind,
  platformOrderId: unknown
) {
  const marker = kind === 'withdraw' ? 'W' : 'M'
  if (platformOrderId === undefined || platformOrderId === null || platformOrderId === '') {
    throw GatewayError.invalidInputs('platform_order_id is required')
  }
  if (!isPlatformOrderId(platformOrderId, marker)) {
    throw GatewayError.invalidInputs(
      `platform_order_id must be 24 characters with marker ${marker} at index 3 (a ${kind} order)`
    )
  }
  const order = await PayoutOrder.query()
    .where('platform_order_id', platformOrderId)
    .where('merchant_id', merchant.id)
    .where('kind', kind)
    .first()
  if (!order) throw GatewayError.notFound(`${kind} order ${platformOrderId} not found`)
  return order
}
