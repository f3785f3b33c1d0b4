import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'

const json = {
  prepare: (value: unknown) =>
    value === null || value === undefined ? null : JSON.stringify(value),
  consume: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value),
}

/** One operator action (panel or CLI) or automated decision. Append-only. */
export default class AuditLog extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare actor: string

  @column()
  declare operatorId: number | null

  @column()
  declare action: string

  @column()
  declare subjectType: string | null

  @column()
  declare subjectId: string | null

  @column(json)
  declare beforeValues: Record<string, unknown> | null

  @column(json)
  declare afterValues: Record<string, unknown> | null

  @column()
  declare reasonCode: string | null

  @column()
  declare comment: string | null

  @column(json)
  declare details: Record<string, unknown> | null

  @column()
  declare ip: string | null

  @column()
  declare requestId: string | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime
}
