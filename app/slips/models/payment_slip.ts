import { DateTime } from 'luxon'
import { BaseModel, belongsTo, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import type { BelongsTo } from '@adonisjs/lucid/types/relations'
import PaymentOrder from '#payments/models/payment_order'
import type { SlipMime } from '#slips/slip_image'
import type { VerificationStatus } from '#slips/verification'

export type SlipSource = 'merchant_api' | 'payment_page'

/** approved: the payment was marked successful on it; rejected: it proved nothing. */
export type SlipReviewDecision = 'approved' | 'rejected'

const json = {
  prepare: (value: unknown) => JSON.stringify(value ?? {}),
  consume: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value),
}

/**
 * One accepted slip upload, attached to its payment order. The image is in
 * the drive under `storageKey`; `verification` holds the latest checks, the
 * facts with their source, and the forensics (the same image or transaction
 * reference on other orders and merchants).
 */
export default class PaymentSlip extends BaseModel {
  @column({ isPrimary: true, consume: Number })
  declare id: number

  @column({ consume: Number })
  declare paymentOrderId: number

  @column()
  declare merchantId: number

  @column()
  declare source: SlipSource

  @column()
  declare storageKey: string

  @column({ columnName: 'sha256' })
  declare sha256: string

  @column()
  declare byteSize: number

  @column()
  declare mime: SlipMime

  @column()
  declare qrText: string | null

  @column()
  declare sendingBank: string | null

  @column()
  declare transRef: string | null

  @column()
  declare verificationStatus: VerificationStatus

  @column()
  declare verificationMsg: string

  @column(json)
  declare verification: Record<string, unknown>

  @dateTimeColumn()
  declare checkedAt: DateTime

  /** The operator who decided on the slip (null: not yet decided). */
  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare reviewedBy: number | null

  @dateTimeColumn()
  declare reviewedAt: DateTime | null

  @column()
  declare reviewDecision: SlipReviewDecision | null

  @column()
  declare reviewReasonCode: string | null

  @column()
  declare reviewComment: string | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  @belongsTo(() => PaymentOrder)
  declare paymentOrder: BelongsTo<typeof PaymentOrder>
}
