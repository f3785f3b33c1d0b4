import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PaymentOrder from '#payments/models/payment_order'
import { AlreadyDone, byAndWhen, latestOrderEvent } from '#core/already_done'
import type { ActionError } from '#core/validation'
import type { Actor } from '#core/actor'

/**
 * Marking paid a payment that is already paid: the outcome asked for holds,
 * so the refusal is a notice saying how it was paid, by whom and when (a
 * double click finds its own first submit: "by you").
 */
export async function alreadyPaidRefusal(
  trx: TransactionClientContract,
  order: PaymentOrder,
  actor?: Actor
): Promise<ActionError> {
  const paid = await latestOrderEvent(trx, 'payment', order.id, {
    to: 'unsettled_paid',
    from: ['open', 'freeze'],
  })
  const how = paid && (paid.reason ?? '').startsWith('marked paid') ? 'marked paid' : 'paid'
  return new AlreadyDone(
    `${order.platformOrderId} was ${how}${byAndWhen(paid, actor)} (it is ${order.status}); nothing more to do`
  )
}
