import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * What every operator action and state change leaves behind:
 * - order_events: one row per transition of an order (from, to, actor,
 *   reason), the timeline operators read;
 * - audit_logs: before and after values, reason code and comment, operator,
 *   source IP and request id; append-only, enforced by triggers;
 * - ledger_transactions.idempotency_key: one posting per kind and reference,
 *   so that an action submitted twice can never post twice.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('order_events', (table) => {
      table.bigIncrements('id')
      table.enum('order_type', ['payment', 'withdraw', 'settlement']).notNullable()
      table.bigInteger('order_id').unsigned().notNullable()
      table.string('from_status', 20).nullable() // null: the order was created
      table.string('to_status', 20).notNullable()
      table.string('actor', 120).notNullable()
      table.string('reason', 255).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.index(['order_type', 'order_id', 'id'])
    })

    this.schema.alterTable('audit_logs', (table) => {
      table.integer('operator_id').unsigned().nullable().after('actor')
      table.json('before_values').nullable()
      table.json('after_values').nullable()
      table.string('reason_code', 64).nullable()
      table.text('comment').nullable()
      table.string('ip', 45).nullable()
      table.string('request_id', 128).nullable()
      table.index(['created_at'])
      table.index(['actor', 'created_at'])
      table.index(['action', 'created_at'])
    })

    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE ledger_transactions
           ADD COLUMN idempotency_key VARCHAR(191) COLLATE ${collation} NULL AFTER reference_id`
      )
      // Existing postings get their key; a duplicate here is a double posting to look at.
      await db.rawQuery(
        `UPDATE ledger_transactions
            SET idempotency_key = CONCAT(kind, ':', reference_type, ':', reference_id)
          WHERE reference_id IS NOT NULL`
      )
      await db.rawQuery(
        'ALTER TABLE ledger_transactions ADD UNIQUE KEY ledger_transactions_idempotency_key_unique (idempotency_key)'
      )
      for (const event of ['UPDATE', 'DELETE']) {
        await db.rawQuery(
          `CREATE TRIGGER audit_logs_no_${event.toLowerCase()} BEFORE ${event} ON audit_logs
           FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_logs is append-only'`
        )
      }
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.rawQuery('DROP TRIGGER IF EXISTS audit_logs_no_update')
      await db.rawQuery('DROP TRIGGER IF EXISTS audit_logs_no_delete')
      await db.rawQuery(
        'ALTER TABLE ledger_transactions DROP INDEX ledger_transactions_idempotency_key_unique, DROP COLUMN idempotency_key'
      )
    })
    this.schema.alterTable('audit_logs', (table) => {
      table.dropIndex(['created_at'])
      table.dropIndex(['actor', 'created_at'])
      table.dropIndex(['action', 'created_at'])
      table.dropColumn('operator_id')
      table.dropColumn('before_values')
      table.dropColumn('after_values')
      table.dropColumn('reason_code')
      table.dropColumn('comment')
      table.dropColumn('ip')
      table.dropColumn('request_id')
    })
    this.schema.dropTable('order_events')
  }
}
