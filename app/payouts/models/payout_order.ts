import { DateTime } from 'luxon'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { satangColumn, dateTimeColumn } from '#core/columns'
import type { HoldState, PayoutStatus } from '#payouts/payout_status'

export type { HoldState } from '#payouts/payout_status'

export type PayoutKind = 'withdraw' | 'settlement'

export default class PayoutOrder extends BaseModel {
  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column()
  declare platformOrderId: string

  @column()
  declare merchantId: number

  @column()
  declare kind: PayoutKind

  @column()
  declare merchantOrderId: string

  @column(satangColumn)
  declare amount: number

  @column(satangColumn)
  declare fee: number

  @column()
  declare bank: string

  @column()
  declare accountNo: string

  @column()
  declare accountName: string

  @column()
  declare notifyUrl: string | null

  @column()
  declare status: PayoutStatus

  @column()
  declare holdState: HoldState

  @dateTimeColumn()
  declare holdExpiresAt: DateTime

  @column()
  declare connector: string

  @column()
  declare connectorReference: string | null

  @column()
  declare batchId: string | null

  @column()
  declare failureReason: string | null

  @dateTimeColumn()
  declare orderAt: DateTime

  @dateTimeColumn()
  declare doneAt: DateTime | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  /** amount + fee: what the hold took from balance. */
  get total() {
    return this.amount + this.fee
  }
}
