import { DateTime } from 'luxon'
import { BaseModel, column, hasMany } from '@adonisjs/lucid/orm'
import type { HasMany } from '@adonisjs/lucid/types/relations'
import Merchant from '#merchants/models/merchant'
import { assertSatang } from '#core/money'

export default class Platform extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare code: string

  @column()
  declare name: string

  @column()
  declare paymentPageDomain: string | null

  @column({ consume: Boolean })
  declare depositEnabled: boolean

  @column()
  declare depositOpenFrom: string | null

  @column()
  declare depositOpenTo: string | null

  @column()
  declare settlementOpenFrom: string | null

  @column()
  declare settlementOpenTo: string | null

  /** Satang: marking a payment successful above this needs a second operator; null = never. */
  @column({ consume: (value) => (value === null ? null : assertSatang(value)) })
  declare fourEyesThreshold: number | null

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime

  @column.dateTime({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  @hasMany(() => Merchant)
  declare merchants: HasMany<typeof Merchant>
}
