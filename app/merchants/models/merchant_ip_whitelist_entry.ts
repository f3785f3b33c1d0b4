import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

export default class MerchantIpWhitelistEntry extends BaseModel {
  static table = 'merchant_ip_whitelist'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare merchantId: number

  /** A single address is stored as a /32 or /128 block. */
  @column()
  declare cidr: string

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime
}
