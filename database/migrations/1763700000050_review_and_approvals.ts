import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * Operator decisions and four eyes:
 * - payment_slips: the review of a flagged slip (who, when, approved or
 *   rejected, reason code and comment);
 * - platforms.four_eyes_threshold: above this amount (satang) marking a
 *   payment successful needs a second operator; null = never;
 * - approval_requests: a decision waiting for a second operator, with the
 *   action and its input to run once approved. pending_key is set only
 *   while the request is pending, so the unique key refuses a second pending
 *   request for the same target and kind even when two arrive at once.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_slips', (table) => {
      table.integer('reviewed_by').unsigned().nullable().references('operators.id')
      table.datetime('reviewed_at', { precision: 3 }).nullable()
      table.enum('review_decision', ['approved', 'rejected']).nullable()
      table.string('review_reason_code', 64).nullable()
      table.text('review_comment').nullable()
      // The flagged-slip queue: slips not yet decided, oldest first.
      table.index(['review_decision', 'created_at'])
    })

    this.schema.alterTable('platforms', (table) => {
      table.bigInteger('four_eyes_threshold').nullable()
    })

    this.schema.createTable('approval_requests', (table) => {
      table.bigIncrements('id')
      table.string('kind', 40).notNullable()
      table.string('target_type', 40).notNullable()
      table.string('target_id', 64).notNullable()
      table.string('action', 64).notNullable()
      table.json('input').notNullable()
      table.bigInteger('amount').nullable()
      table.integer('requested_by').unsigned().nullable().references('operators.id')
      table.string('requested_by_actor', 120).notNullable()
      table.integer('reviewed_by').unsigned().nullable().references('operators.id')
      table.enum('status', ['pending', 'approved', 'rejected', 'expired']).notNullable()
      table.string('pending_key', 160).nullable().unique()
      table.string('reason_code', 64).nullable()
      table.text('comment').nullable()
      table.integer('decided_by').unsigned().nullable().references('operators.id')
      table.string('decided_by_actor', 120).nullable()
      table.datetime('decided_at', { precision: 3 }).nullable()
      table.string('decision_reason_code', 64).nullable()
      table.text('decision_comment').nullable()
      table.json('result').nullable()
      table.datetime('expires_at', { precision: 3 }).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      table.index(['status', 'expires_at'])
      table.index(['target_type', 'target_id'])
    })
    // Targets are identifiers (platform_order_id, platform code): byte for byte.
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE approval_requests
           MODIFY target_id VARCHAR(64) COLLATE ${collation} NOT NULL,
           MODIFY pending_key VARCHAR(160) COLLATE ${collation} NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('approval_requests')
    this.schema.alterTable('platforms', (table) => {
      table.dropColumn('four_eyes_threshold')
    })
    this.schema.alterTable('payment_slips', (table) => {
      table.dropIndex(['review_decision', 'created_at'])
      table.dropForeign(['reviewed_by'])
      table.dropColumn('reviewed_by')
      table.dropColumn('reviewed_at')
      table.dropColumn('review_decision')
      table.dropColumn('review_reason_code')
      table.dropColumn('review_comment')
    })
  }
}
