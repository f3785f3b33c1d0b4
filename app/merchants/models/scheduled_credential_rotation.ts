import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

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

  @dateTimeColumn()
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
  @dateTimeColumn()
  declare doneAt: DateTime | null

  @column()
  declare failure: string | null

  @column()
  declare credentialId: number | null

  @dateTimeColumn()
  declare previousValidUntil: DateTime | null

  @column({ serializeAs: null })
  declare newTokenEncrypted: string | null

  @column({ serializeAs: null })
  declare newSecretEncrypted: string | null

  @dateTimeColumn()
  declare revealedAt: DateTime | null

  @column()
  declare revealedBy: string | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime
}
