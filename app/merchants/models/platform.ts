import { DateTime } from 'luxon'
import { BaseModel, afterDelete, afterSave, column, hasMany } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import gateway from '#config/gateway'
import { ProcessCache, configChanged } from '#core/process_cache'
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

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  @hasMany(() => Merchant)
  declare merchants: HasMany<typeof Merchant>

  /**
   * The platform as payment create and settlement read it on every request
   * (killswitch, open periods, payment page domain): from a per-process cache
   * (CONFIG_CACHE_TTL_MS). Not for writing.
   */
  static cached(id: number) {
    return platforms.get(id, () => Platform.findOrFail(id))
  }

  @afterSave()
  @afterDelete()
  static forgetCached(platform: Platform) {
    return configChanged(platform.$trx, () => platforms.forget(platform.id))
  }
}

const platforms = new ProcessCache<number, Platform>(() => gateway.configCacheTtlMs)
