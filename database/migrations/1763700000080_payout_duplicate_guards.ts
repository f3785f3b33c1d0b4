import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * The 3-minute duplicate rule of /withdraw/create as a row per merchant, bank,
 * account and amount holding the time of the last such withdrawal
 * (docs/decisions.md, "Statement batches"). A create takes that row's lock
 * instead of the merchant's balance row for its whole transaction: only
 * identical withdrawals wait for one another. Rows older than the window are
 * deleted by the payout sweep. Filled here from the withdrawals of the last
 * window, so that the rule holds across the deploy.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('payout_duplicate_guards', (table) => {
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.string('bank', 8).notNullable()
      table.string('account_no', 15).notNullable()
      table.bigInteger('amount').notNullable()
      table.datetime('last_withdrawal_at', { precision: 3 }).notNullable()
      table.primary(['merchant_id', 'bank', 'account_no', 'amount'])
      table.index(['last_withdrawal_at'])
    })
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE payout_duplicate_guards
           MODIFY bank VARCHAR(8) COLLATE ${collation} NOT NULL,
           MODIFY account_no VARCHAR(15) COLLATE ${collation} NOT NULL`
      )
      await db.rawQuery(
        `INSERT INTO payout_duplicate_guards (merchant_id, bank, account_no, amount, last_withdrawal_at)
         SELECT merchant_id, bank, account_no, amount, MAX(created_at)
           FROM payout_orders
          WHERE kind = 'withdraw' AND created_at >= UTC_TIMESTAMP(3) - INTERVAL 10 MINUTE
          GROUP BY merchant_id, bank, account_no, amount`
      )
    })
  }

  async down() {
    this.schema.dropTable('payout_duplicate_guards')
  }
}
