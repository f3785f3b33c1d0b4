import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import { compose } from '@adonisjs/core/helpers'
import hash from '@adonisjs/core/services/hash'
import { withAuthFinder } from '@adonisjs/auth/mixins/lucid'
import type { OperatorRole } from '#operators/role_names'

const AuthFinder = withAuthFinder(() => hash.use(), {
  uids: ['email'],
  passwordColumnName: 'password',
})

/** A person who works in the back-office. */
export default class Operator extends compose(BaseModel, AuthFinder) {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare email: string

  @column()
  declare name: string

  /** argon2id hash; null until the operator sets one through their enrolment link. */
  @column({ serializeAs: null })
  declare password: string | null

  /** SHA-256 of the one-time enrolment link's token (null once used). */
  @column({ serializeAs: null })
  declare enrolmentTokenHash: string | null

  @dateTimeColumn()
  declare enrolmentExpiresAt: DateTime | null

  @column()
  declare role: OperatorRole

  @column({ serializeAs: null })
  declare totpSecretEncrypted: string | null

  @dateTimeColumn()
  declare totpEnabledAt: DateTime | null

  @column({ consume: (value) => (value === null ? null : Number(value)), serializeAs: null })
  declare totpLastStep: number | null

  @column({
    serializeAs: null,
    prepare: (value: string[] | null) => (value === null ? null : JSON.stringify(value)),
    consume: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value),
  })
  declare recoveryCodeHashes: string[] | null

  @dateTimeColumn()
  declare disabledAt: DateTime | null

  @dateTimeColumn()
  declare lastLoginAt: DateTime | null

  /**
   * Who asked for this account (null: the server's shell, or before it was
   * recorded), who last raised its role and who last re-enabled it: their
   * requests are never approved through this account.
   */
  @column()
  declare createdBy: number | null

  @column()
  declare createdByActor: string

  @column()
  declare raisedBy: number | null

  @column()
  declare raisedByActor: string | null

  @dateTimeColumn()
  declare raisedAt: DateTime | null

  @column()
  declare enabledBy: number | null

  @column()
  declare enabledByActor: string | null

  @dateTimeColumn()
  declare enabledAt: DateTime | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  /** How the audit log and the order timeline name this operator. */
  get actorName() {
    return `operator:${this.email}`
  }
}
