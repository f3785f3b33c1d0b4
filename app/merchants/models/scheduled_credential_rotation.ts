import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'

export type RotationStatus = 'scheduled' | 'done' | 'cancelled' | 'failed'

/**
 * A credential rotation an operator scheduled for `runAt`; the worker carries
 * it out. The new values stay encrypted until revealed once.
 */
export default class ScheduledCredentialRotation extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare merchantId: number

  @column({ consume: Boolean })
  declare rotateToken: boolean

  @column({ consume: Boolean })
  declare rotateSecret: boolean

  @column()
  declare graceSeconds: number

  @column.dateTime()
  declare runAt: DateTime

  @column()
  declare status: RotationStatus

  @column()
  declare requestedBy: string

  @column()
  declare requestedByOperatorId: number | null

  @column()
  declare comment: string | null

  /** When it ran, was cancelled or failed. */
  @column.dateTime()
  declare doneAt: DateTime | null

  @column()
  declare failure: string | null

  @column()
  declare credentialId: number | null

  @column.dateTime()
  declare previousValidUntil: DateTime | null

  @column({ serializeAs: null })
  declare newTokenEncrypted: string | null

  @column({ serializeAs: null })
  declare newSecretEncrypted: string | null

  @column.dateTime()
  declare revealedAt: DateTime | null

  @column()
  declare revealedBy: string | null

  @column.dateTime({ autoCreate: true })
  declare createdAt: DateTime

  @column.dateTime({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime
}
