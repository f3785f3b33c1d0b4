import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

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

  /** End of the grace period after a rotation; null: the current credential. */
  @dateTimeColumn()
  declare expiresAt: DateTime | null

  /** When the worker revoked it after its grace period (or a rotation with grace 0 did). */
  @dateTimeColumn()
  declare revokedAt: DateTime | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime
}
