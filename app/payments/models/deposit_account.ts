import { DateTime } from 'luxon'
import { BaseModel, afterDelete, afterSave, column } from '@adonisjs/lucid/orm'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { depositPools } from '#payments/deposit_pool_cache'
import { configChanged } from '#core/process_cache'
import { satangColumn, dateTimeColumn } from '#core/columns'

export type DepositChannel = 'qr' | 'transfer' | 'external'

const nullableNumber = {
  consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
}

export default class DepositAccount extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare depositGroup: string

  @column()
  declare channel: DepositChannel

  @column()
  declare bank: string

  @column()
  declare accountNo: string

  @column()
  declare accountName: string

  @column()
  declare promptpayId: string | null

  @column()
  declare billerId: string | null

  @column()
  declare provider: string | null

  @column({
    prepare: (value) => (value === null || value === undefined ? null : JSON.stringify(value)),
    consume: (value) => (typeof value === 'string' ? JSON.parse(value) : value),
  })
  declare providerConfig: Record<string, unknown> | null

  @column(satangColumn)
  declare minAmount: number

  @column(nullableNumber)
  declare maxAmount: number | null

  @column(nullableNumber)
  declare hourlyCountLimit: number | null

  @column(nullableNumber)
  declare hourlyAmountLimit: number | null

  @column(nullableNumber)
  declare dailyCountLimit: number | null

  @column(nullableNumber)
  declare dailyAmountLimit: number | null

  @column()
  declare maxAdjustment: number

  @column()
  declare priority: number

  @column({ consume: Boolean })
  declare active: boolean

  /** The statement layout its files are read with when an import names none (null: neutral). */
  @column(nullableNumber)
  declare statementLayoutId: number | null

  @dateTimeColumn({ autoCreate: true })
  declare createdAt: DateTime

  @dateTimeColumn({ autoCreate: true, autoUpdate: true })
  declare updatedAt: DateTime

  /** Payment create reads accounts from a per-process cache (app/payments/deposit_pool_cache.ts). */
  @afterSave()
  @afterDelete()
  static forgetCachedPools(row: { $trx?: TransactionClientContract }) {
    return configChanged(row.$trx, () => depositPools.forget())
  }
}
