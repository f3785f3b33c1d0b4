import { DateTime } from 'luxon'
import { BaseModel, belongsTo, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import type { BelongsTo } from '@adonisjs/lucid/types/relations'
import Operator from '#operators/models/operator'
import type { OrderKind } from '#payments/order_kinds'

/** A named filter of the orders list, shared with every operator. */
export default class SavedOrderView extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare name: string

  @column()
  declare kind: OrderKind

  /** The list's query string (filters and sort). */
  @column()
  declare query: string

  /** The operator who saved it: the only one who deletes it. */
  @column()
  declare createdBy: number

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @belongsTo(() => Operator, { foreignKey: 'createdBy' })
  declare creator: BelongsTo<typeof Operator>
}
