import { DateTime } from 'luxon'
import { BaseModel, belongsTo, column } from '@adonisjs/lucid/orm'
import type { BelongsTo } from '@adonisjs/lucid/types/relations'
import Merchant from '#merchants/models/merchant'
import DepositAccount, { type DepositChannel } from '#payments/models/deposit_account'
import { satangColumn, dateTimeColumn } from '#core/columns'
import type { PaymentStatus } from '#payments/payment_status'

export type PaymentType = 'QR' | 'TRANSFER' | 'FLEX'

export default class PaymentOrder extends BaseModel {
  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column()
  declare platformOrderId: string

  @column()
  declare uuid: string

  @column()
  declare merchantId: number

  @column()
  declare merchantOrderId: string

  @column()
  declare paymentType: PaymentType

  @column()
  declare channel: DepositChannel

  @column()
  declare depositAccountId: number

  @column(satangColumn)
  declare amount: number

  @column(satangColumn)
  declare transferAmount: number

  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare slotAmount: number | null

  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare fee: number | null

  /**
   * What the merchant was credited for before the fee, once paid: the
   * amount, or what the bank received when an operator credited an
   * underpayment or overpayment. The settlement moves it less the fee.
   */
  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare paidAmount: number | null

  @column()
  declare qrcode: string | null

  @column()
  declare paymentReference: string | null

  @column()
  declare externalReference: string | null

  @column()
  declare externalUrl: string | null

  @column()
  declare customerBank: string

  @column()
  declare customerAccountName: string

  @column()
  declare customerAccountNo: string

  @column()
  declare notifyUrl: string | null

  @column()
  declare status: PaymentStatus

  @column()
  declare statusBeforeFreeze: PaymentStatus | null

  @column({ consume: Boolean })
  declare awaitingReview: boolean

  @column()
  declare errorReason: string | null

  @dateTimeColumn()
  declare orderAt: DateTime

  @dateTimeColumn()
  declare expireAt: DateTime

  @dateTimeColumn()
  declare paidAt: DateTime | null

  @dateTimeColumn()
  declare settledAt: DateTime | null

  @dateTimeColumn()
  declare closedAt: DateTime | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  @belongsTo(() => Merchant)
  declare merchant: BelongsTo<typeof Merchant>

  @belongsTo(() => DepositAccount)
  declare depositAccount: BelongsTo<typeof DepositAccount>
}
