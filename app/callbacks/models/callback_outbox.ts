import { DateTime } from 'luxon'
import { BaseModel, column, hasMany } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import type { HasMany } from '@adonisjs/lucid/types/relations'
import CallbackAttempt from '#callbacks/models/callback_attempt'

export type CallbackOrderType = 'payment' | 'withdraw' | 'settlement'
export type CallbackState = 'pending' | 'delivered' | 'failed'

/**
 * One merchant callback (transactional outbox row, see docs/callbacks.md).
 * Rows are written by #callbacks/outbox inside the transaction of the
 * state change they report; delivery only updates the bookkeeping columns.
 */
export default class CallbackOutbox extends BaseModel {
  static table = 'callback_outbox'

  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column()
  declare merchantId: number

  @column()
  declare orderType: CallbackOrderType

  @column({ consume: Number })
  declare orderId: number

  @column()
  declare platformOrderId: string

  @column()
  declare status: string

  @column()
  declare notifyUrl: string

  /** The exact bytes (UTF-8) posted to notify_url. */
  @column()
  declare body: string

  /** Lowercase hex HMAC-SHA256 of body with the merchant secret current when written. */
  @column()
  declare signature: string | null

  @column()
  declare state: CallbackState

  /** Attempts of the current series. */
  @column()
  declare attempts: number

  /** 0, then +1 per `callbacks:resend`. */
  @column()
  declare series: number

  @dateTimeColumn()
  declare enqueuedAt: DateTime | null

  @column()
  declare jobId: string | null

  @column()
  declare claimedBy: string | null

  @dateTimeColumn()
  declare claimedUntil: DateTime | null

  @dateTimeColumn()
  declare lastAttemptAt: DateTime | null

  @column()
  declare lastHttpStatus: number | null

  @column()
  declare lastError: string | null

  @dateTimeColumn()
  declare nextAttemptAt: DateTime | null

  @dateTimeColumn()
  declare deliveredAt: DateTime | null

  @dateTimeColumn()
  declare createdAt: DateTime

  @hasMany(() => CallbackAttempt, { foreignKey: 'callbackOutboxId' })
  declare attemptLog: HasMany<typeof CallbackAttempt>
}
