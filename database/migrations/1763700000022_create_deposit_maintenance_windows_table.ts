import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * Maintenance windows of the deposit-account pool: from starts_at to
 * ends_at, one account (deposit_account_id) or every account of a bank
 * (bank) is out of selection; the times alone decide, so accounts come back
 * by themselves. A cancelled window keeps its row (cancelled_at).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('deposit_maintenance_windows', (table) => {
      table.increments('id')
      table.integer('deposit_account_id').unsigned().nullable().references('deposit_accounts.id')
      table.string('bank', 8).nullable()
      table.datetime('starts_at', { precision: 3 }).notNullable()
      table.datetime('ends_at', { precision: 3 }).notNullable()
      table.string('reason', 255).notNullable()
      table.string('created_by', 120).notNullable()
      table.datetime('cancelled_at', { precision: 3 }).nullable()
      table.string('cancelled_by', 120).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      table.index(['ends_at'])
      table.index(['bank', 'ends_at'])
    })
    // Compared with deposit_accounts.bank, which has the binary collation.
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE deposit_maintenance_windows MODIFY bank VARCHAR(8) COLLATE ${collation} NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('deposit_maintenance_windows')
  }
}
