import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PayoutOrder from '#payouts/models/payout_order'
import { isPlatformOrderId } from '#core/order_ids'
import { ActionError } from '#core/validation'

/** A withdrawal's or settlement's platform_order_id: 24 characters, marker W or M at index 3. */
export const payoutOrderId = vine.createRule((value, _options, field: FieldContext) => {
  const id = typeof value === 'string' ? value.trim() : value
  if (!isPlatformOrderId(id, 'W') && !isPlatformOrderId(id, 'M')) {
    return field.report(
      `${field.name} must be a withdrawal or settlement id: 24 characters with marker W or M at index 3`,
      'payout_order_id',
      field
    )
  }
  field.mutate(id, field)
})

/** The payout as the audit log and the order screens show it. */
export function payoutSnapshot(order: PayoutOrder) {
  return {
    status: order.status,
    hold_state: order.holdState,
    failure_reason: order.failureReason,
    batch_id: order.batchId,
  }
}

/** The withdrawal or settlement by platform_order_id, locked for the transaction; 404 naming the field. */
export async function lockPayout(
  trx: TransactionClientContract,
  platformOrderId: string,
  field = 'platform_order_id'
) {
  const order = await PayoutOrder.query({ client: trx })
    .where('platform_order_id', platformOrderId)
    .forUpdate()
    .first()
  if (!order) throw ActionError.notFound(field, `No withdrawal or settlement ${platformOrderId}`)
  return order
}
