import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/actor'

export type OrderType = 'payment' | 'withdraw' | 'settlement'

/**
 * One step of an order's life: created (from null), each status change, and
 * events that keep the status (a hold released). The order page's timeline.
 */
export class OrderEvent extends BaseModel {
  static table = 'order_events'

  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column()
  declare orderType: OrderType

  @column({ consume: Number })
  declare orderId: number

  @column()
  declare fromStatus: string | null

  @column()
  declare toStatus: string

  @column()
  declare actor: string

  @column()
  declare reason: string | null

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime
}

/** Appends an order's event in the transaction that made the change. */
export async function recordOrderEvent(
  trx: TransactionClientContract,
  event: {
    orderType: OrderType
    orderId: number
    from: string | null
    to: string
    actor: Actor
    reason?: string | null
  }
) {
  await OrderEvent.create(
    {
      orderType: event.orderType,
      orderId: event.orderId,
      fromStatus: event.from,
      toStatus: event.to,
      actor: event.actor.name,
      reason: event.reason ? event.reason.slice(0, 255) : null,
    },
    { client: trx }
  )
}

/** An order's events, oldest first. */
export function orderTimeline(orderType: OrderType, orderId: number) {
  return OrderEvent.query().where({ order_type: orderType, order_id: orderId }).orderBy('id')
}
