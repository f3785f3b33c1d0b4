import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/actor'
import { statement } from '#core/sql_batch'

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

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime
}

interface NewOrderEvent {
  orderType: OrderType
  orderId: number
  from: string | null
  to: string
  actor: Actor
  reason?: string | null
}

/** The order_events row of an event (created_at aside). */
function eventRow(event: NewOrderEvent) {
  return {
    order_type: event.orderType,
    order_id: event.orderId,
    from_status: event.from,
    to_status: event.to,
    actor: event.actor.name,
    reason: event.reason ? event.reason.slice(0, 255) : null,
  }
}

/** Appends an order's event in the transaction that made the change. */
export async function recordOrderEvent(trx: TransactionClientContract, event: NewOrderEvent) {
  await recordOrderEvents(trx, [event])
}

/** recordOrderEvent for many orders changed together (a statement import's batch), one INSERT. */
export async function recordOrderEvents(trx: TransactionClientContract, events: NewOrderEvent[]) {
  if (events.length === 0) return
  const createdAt = new Date()
  await trx
    .insertQuery()
    .table(OrderEvent.table)
    .multiInsert(events.map((event) => ({ ...eventRow(event), created_at: createdAt })))
}

/**
 * The event of an order created by the statement just before this one in
 * the same batch (app/core/sql_batch.ts): its id is LAST_INSERT_ID().
 */
export function createdOrderEventStatement(event: Omit<NewOrderEvent, 'orderId' | 'from'>) {
  const row = eventRow({ ...event, orderId: 0, from: null })
  return statement(
    `INSERT INTO order_events (order_type, order_id, from_status, to_status, actor, reason, created_at)
     VALUES (?, LAST_INSERT_ID(), NULL, ?, ?, ?, ?)`,
    [row.order_type, row.to_status, row.actor, row.reason, new Date()]
  )
}

/**
 * The event of a payout order's compare-and-set status change, made by the
 * UPDATE just before this statement in the same batch: appended only if that
 * UPDATE changed the row (ROW_COUNT() = 1), so a change that found the order
 * in another status records nothing. The order type is the order's `kind`
 * (withdraw or settlement).
 */
export function changedPayoutEventStatement(event: Omit<NewOrderEvent, 'orderType'>) {
  const row = eventRow({ ...event, orderType: 'withdraw' })
  return statement(
    `INSERT INTO order_events (order_type, order_id, from_status, to_status, actor, reason, created_at)
     SELECT kind, id, ?, ?, ?, ?, ? FROM payout_orders WHERE id = ? AND ROW_COUNT() = 1`,
    [row.from_status, row.to_status, row.actor, row.reason, new Date(), row.order_id]
  )
}

/** An order's events, oldest first. */
export function orderTimeline(orderType: OrderType, orderId: number) {
  return OrderEvent.query().where({ order_type: orderType, order_id: orderId }).orderBy('id')
}
