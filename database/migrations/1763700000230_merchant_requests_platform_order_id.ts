import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * A create's request row names the order it creates by its platform_order_id,
 * which the gateway makes before the order's INSERT: the row is written once,
 * complete, first in the create's batch, instead of an INSERT and an UPDATE
 * naming the order's auto-increment id after it (docs/performance.md).
 * `order_id` stays for slip uploads, which link the slip once it exists.
 */
export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE merchant_requests ADD COLUMN platform_order_id CHAR(24) COLLATE ${collation} NULL AFTER order_id`
      )
    })
  }

  async down() {
    this.schema.alterTable('merchant_requests', (table) => {
      table.dropColumn('platform_order_id')
    })
  }
}
