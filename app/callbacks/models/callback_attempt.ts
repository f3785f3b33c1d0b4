import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

/** One POST of a callback (or one refused POST); written once, never updated. */
export default class CallbackAttempt extends BaseModel {
  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column({ consume: Number })
  declare callbackOutboxId: number

  @column()
  declare series: number

  /** 1..5 within the series. */
  @column()
  declare attempt: number

  @column()
  declare jobId: string

  /** The IP address the connection went to, when one was made. */
  @column()
  declare targetAddress: string | null

  /** null: no HTTP answer (timeout, network error, refused target). */
  @column()
  declare httpStatus: number | null

  @column()
  declare latencyMs: number

  @column()
  declare responseExcerpt: string | null

  @column()
  declare error: string | null

  @dateTimeColumn()
  declare createdAt: DateTime
}
