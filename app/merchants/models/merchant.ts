import { DateTime } from 'luxon'
import { BaseModel, afterSave, belongsTo, column, hasMany } from '@adonisjs/lucid/orm'
import type { BelongsTo, HasMany } from '@adonisjs/lucid/types/relations'
import Platform from '#merchants/models/platform'
import MerchantCredential from '#merchants/models/merchant_credential'
import MerchantIpWhitelistEntry from '#merchants/models/merchant_ip_whitelist_entry'
import { satangColumn, dateTimeColumn } from '#core/columns'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'

export type MerchantStatus = 'active' | 'suspended'

export default class Merchant extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  /** The public identifier merchants send in every request. */
  @column()
  declare merchantId: string

  @column()
  declare platformId: number

  @column()
  declare name: string

  /** First three characters of every platform_order_id of this merchant. */
  @column()
  declare orderPrefix: string

  @column()
  declare status: MerchantStatus

  @column({ consume: Boolean })
  declare paymentEnabled: boolean

  @column({ consume: Boolean })
  declare withdrawEnabled: boolean

  @column({ consume: Boolean })
  declare settlementEnabled: boolean

  @column()
  declare depositGroup: string | null

  @column()
  declare payoutRoute: string | null

  @column()
  declare paymentFeeRateBps: number

  @column(satangColumn)
  declare withdrawFeeFlat: number

  @column()
  declare withdrawFeeRateBps: number

  @column(satangColumn)
  declare settlementFeeFlat: number

  @column(satangColumn)
  declare withdrawMin: number

  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare withdrawMax: number | null

  @column({ consume: Boolean })
  declare withdrawDuplicateCheck: boolean

  @column(satangColumn)
  declare settlementMin: number

  @column(satangColumn)
  declare settlementMax: number

  @column()
  declare orderTtlSeconds: number

  @column()
  declare slipUploadWaitSeconds: number

  /** Merchant API requests per second; null: the gateway default. */
  @column()
  declare apiRateLimit: number | null

  @column({ consume: Boolean })
  declare negativeBalanceFlag: boolean

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  @belongsTo(() => Platform)
  declare platform: BelongsTo<typeof Platform>

  @hasMany(() => MerchantCredential)
  declare credentials: HasMany<typeof MerchantCredential>

  @hasMany(() => MerchantIpWhitelistEntry)
  declare ipWhitelist: HasMany<typeof MerchantIpWhitelistEntry>

  /**
   * Authentication caches the merchant row in every web process: any saved
   * change (status, settings, a new merchant taking an id cached as unknown)
   * drops those copies once its transaction commits. Writes that bypass the
   * model are seen within AUTH_CACHE_TTL_MS.
   */
  @afterSave()
  static async announceAuthChange(merchant: Merchant) {
    await merchantAuthChanged(merchant.$trx, merchant.merchantId)
  }
}
