import PayoutOrder, { type PayoutKind } from '#payouts/models/payout_order'
import type Merchant from '#merchants/models/merchant'
import { InvalidOrderInput, OrderNotFound } from '#core/refusals'
import { isPlatformOrderId } from '#core/order_ids'

/**
 * The merchant's own withdraw (marker W) or settlement (marker M) order:
 * InvalidOrderInput for a missing or malformed id, OrderNotFound when missing
 * or owned by another merchant.
 */
export async function findMerchantPayout(
  merchant: Merchant,
  kind: PayoutKind,
  platformOrderId: unknown
) {
  const marker = kind === 'withdraw' ? 'W' : 'M'
  if (platformOrderId === undefined || platformOrderId === null || platformOrderId === '') {
    throw new InvalidOrderInput('platform_order_id is required')
  }
  if (!isPlatformOrderId(platformOrderId, marker)) {
    throw new InvalidOrderInput(
      `platform_order_id must be 24 characters with marker ${marker} at index 3 (a ${kind} order)`
    )
  }
  const order = await PayoutOrder.query()
    .where('platform_order_id', platformOrderId)
    .where('merchant_id', merchant.id)
    .where('kind', kind)
    .first()
  if (!order) throw new OrderNotFound(`${kind} order ${platformOrderId} not found`)
  return order
}
