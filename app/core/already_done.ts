import type { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { ActionError } from '#core/validation'
import { formatGatewayDateTime } from '#core/clock'
import { OrderEvent, type OrderType } from '#core/order_events'
import type { Actor } from '#core/actor'

/**
 * A refusal because what the operator asked for already holds (a double
 * click, or a colleague who was first): nothing was written by this submit,
 * but nothing is wrong either. Pages show it as a notice, not an error, and
 * the message says who did it and when.
 */
export class AlreadyDone extends ActionError {
  readonly alreadyDone = true

  constructor(message: string) {
    super([{ field: null, message }])
    this.name = 'AlreadyDone'
  }
}

/** Who did it, in the operator's words: "you" when it is the same actor. */
export function byWhom(recorded: string | null | undefined, actor?: Actor): string {
  if (!recorded) return 'someone'
  if (actor && recorded === actor.name) return 'you'
  return recorded.startsWith('operator:') ? recorded.slice('operator:'.length) : recorded
}

/**
 * When, in Bangkok time: "14:02 (GMT+7)" today, with the date on another
 * day (a time alone would read as today's).
 */
export function atWhen(at: DateTime | Date | null | undefined, now: Date = new Date()): string {
  const shown = at ? formatGatewayDateTime(at instanceof Date ? at : at.toJSDate()) : null
  if (!shown) return 'an unrecorded time'
  const today = formatGatewayDateTime(now)!.slice(0, 10)
  return shown.slice(0, 10) === today
    ? `${shown.slice(11, 16)} (GMT+7)`
    : `${shown.slice(0, 16)} (GMT+7)`
}

/** "by you at 14:02 (GMT+7)", or nothing when no event recorded it. */
export function byAndWhen(event: { actor: string; createdAt: DateTime } | null, actor?: Actor) {
  return event ? ` by ${byWhom(event.actor, actor)} at ${atWhen(event.createdAt)}` : ''
}

/**
 * The latest event of an order that matches `where` (read in the deciding
 * transaction, after the order's row lock, so it is the change that won).
 */
export function latestOrderEvent(
  trx: TransactionClientContract,
  orderType: OrderType,
  orderId: number,
  where: { to?: string | string[]; from?: string | string[]; notFrom?: string; notTo?: string }
) {
  const query = OrderEvent.query({ client: trx })
    .where('order_type', orderType)
    .where('order_id', orderId)
  if (where.to !== undefined) query.whereIn('to_status', [where.to].flat())
  if (where.from !== undefined) query.whereIn('from_status', [where.from].flat())
  if (where.notFrom !== undefined) query.whereNot('from_status', where.notFrom)
  if (where.notTo !== undefined) query.whereNot('to_status', where.notTo)
  return query.orderBy('id', 'desc').first()
}
