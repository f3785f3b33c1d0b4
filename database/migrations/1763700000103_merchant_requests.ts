import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * A merchant's state-changing requests, executed once (docs/decisions.md,
 * "The same request gets the same answer"): keyed by the merchant and the
 * request's signature (an HMAC of its exact bytes), written in the
 * transaction of what the request created (`order_type`, `order_id`), so a
 * request sent again gets the original answer, whatever happened to Redis
 * or the process in between. A refusal is kept with its status and body.
 * No auto-increment: a row written between an order's INSERT and its
 * event's (LAST_INSERT_ID()) leaves LAST_INSERT_ID() alone.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('merchant_requests', (table) => {
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.specificType('signature', 'CHAR(64)').notNullable()
      table.string('endpoint', 40).notNullable()
      table.enum('order_type', ['payment', 'withdraw', 'settlement', 'slip']).nullable()
      table.bigInteger('order_id').unsigned().nullable()
      // The answer as sent, once known: a refusal's, or a success's (the rest
      // are rebuilt from the order they created).
      table.smallint('status').unsigned().nullable()
      table.text('body', 'mediumtext').nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.primary(['merchant_id', 'signature'])
      table.index(['created_at'], 'merchant_requests_created_index')
    })
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE merchant_requests MODIFY signature CHAR(64) COLLATE ${collation} NOT NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('merchant_requests')
  }
}
