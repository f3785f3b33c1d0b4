import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'

export default class MerchantCredential extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare merchantId: number

  @column({ serializeAs: null })
  declare tokenHash: string

  @column()
  declare tokenHint: string

  @column({ serializeAs: null })
  declare secretEncrypted: string

  @column.dateTime()
  declare expiresAt: DateTime | null

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime
}
