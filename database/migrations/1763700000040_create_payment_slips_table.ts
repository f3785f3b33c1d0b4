import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * Payment slips: one row per accepted upload (merchant API or payment page),
 * attached to its payment order. The image itself is in the drive under
 * storage_key; the row keeps its hash, what its QR said and the latest
 * verification (the checks, the facts and their source, and the forensics
 * operators review).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('payment_slips', (table) => {
      table.bigIncrements('id')
      table.bigInteger('payment_order_id').unsigned().notNullable().references('payment_orders.id')
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.enum('source', ['merchant_api', 'payment_page']).notNullable()
      table.string('storage_key', 255).notNullable()
      table.specificType('sha256', 'CHAR(64)').notNullable()
      table.integer('byte_size').unsigned().notNullable()
      table.enum('mime', ['image/png', 'image/jpeg']).notNullable()
      table.text('qr_text').nullable()
      table.string('sending_bank', 3).nullable()
      table.string('trans_ref', 64).nullable()
      table.enum('verification_status', ['pending', 'passed', 'failed', 'unreadable']).notNullable()
      table.string('verification_msg', 255).notNullable()
      table.json('verification').notNullable()
      table.datetime('checked_at', { precision: 3 }).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      // The per-order upload limits read an order's latest slips.
      table.index(['payment_order_id', 'created_at'])
      table.index(['sha256'])
      table.index(['trans_ref'])
      table.index(['verification_status', 'created_at'])
    })
    // The hash and the transaction reference are compared byte for byte (slip reuse).
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE payment_slips
           MODIFY sha256 CHAR(64) COLLATE ${collation} NOT NULL,
           MODIFY trans_ref VARCHAR(64) COLLATE ${collation} NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('payment_slips')
  }
}
