import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PaymentOrder from '#payments/models/payment_order'
import { isPlatformOrderId } from '#core/order_ids'
import { ActionError } from '#core/validation'

/** A payment order's platform_order_id as an operator types it (marker P). */
export const paymentOrderId = vine.createRule((value, _options, field: FieldContext) => {
  const id = typeof value === 'string' ? value.trim() : value
  if (!isPlatformOrderId(id, 'P')) {
    return field.report(
      `${field.name} must be a payment order id: 24 characters with marker P at index 3`,
      'payment_order_id',
      field
    )
  }
  field.mutate(id, field)
})

/** The comment every operator decision carries. */
export const decisionComment = () => vine.string().trim().minLength(1).maxLength(1000)

/** The payment as the audit log and the order screens show it. */
export function paymentSnapshot(order: PaymentOrder) {
  return {
    status: order.status,
    status_before_freeze: order.statusBeforeFreeze,
    awaiting_review: order.awaitingReview,
    fee: order.fee,
    error_reason: order.errorReason,
    paid_at: order.paidAt?.toISO() ?? null,
  }
}

/** The payment by platform_order_id, locked for the transaction; 404 naming the field. */
export async function lockPayment(
  trx: TransactionClientContract,
  platformOrderId: string,
  field = 'platform_order_id'
) {
  const order = await PaymentOrder.query({ client: trx })
    .where('platform_order_id', platformOrderId)
    .forUpdate()
    .first()
  if (!order) throw ActionError.notFound(field, `no payment order ${platformOrderId}`)
  return order
}

/** The status a frozen order holds underneath (its own status otherwise). */
export function underlyingStatus(order: Pick<PaymentOrder, 'status' | 'statusBeforeFreeze'>) {
  return order.status === 'freeze' ? order.statusBeforeFreeze : order.status
}
