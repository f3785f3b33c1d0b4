import { DateTime } from 'luxon'
import { BaseModel, afterDelete, afterSave, column } from '@adonisjs/lucid/orm'
import { dateTimeColumn } from '#core/columns'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { depositPools } from '#payments/deposit_pool_cache'
import { configChanged } from '#core/process_cache'

/** A time when one deposit account, or every account of a bank, is out of selection. */
export default class MaintenanceWindow extends BaseModel {
  static table = 'deposit_maintenance_windows'

  @column({ isPrimary: true })
  declare id: number

  /** The account taken out; null when the window is for a bank. */
  @column()
  declare depositAccountId: number | null

  /** Every account of this bank is taken out; null when the window is for one account. */
  @column()
  declare bank: string | null

  @dateTimeColumn()
  declare startsAt: DateTime

  @dateTimeColumn()
  declare endsAt: DateTime

  @column()
  declare reason: string

  @column()
  declare createdBy: string

  @dateTimeColumn()
  declare cancelledAt: DateTime | null

  @column()
  declare cancelledBy: string | null

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
