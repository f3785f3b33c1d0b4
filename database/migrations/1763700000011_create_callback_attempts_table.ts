import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    /**
     * Delivery bookkeeping on the outbox row (see docs/callbacks.md):
     * - signature: X-Signature of `body`, computed once when the row is written
     *   (re-computed only by `callbacks:resend`);
     * - series: 0 for the first delivery, +1 per resend; part of the job id, so
     *   a resend is a new BullMQ job and jobs of an older series do nothing;
     * - enqueued_at / job_id: the job of the current series was added to Redis;
     * - claimed_by / claimed_until: lease of the job posting right now, so that
     *   two jobs for one row never post at the same time;
     * - last_*, next_attempt_at: what an operator wants to see without joining.
     */
    this.schema.alterTable('callback_outbox', (table) => {
      table.specificType('signature', 'CHAR(64)').nullable()
      table.integer('series').unsigned().notNullable().defaultTo(0)
      table.datetime('enqueued_at', { precision: 3 }).nullable()
      table.string('job_id', 64).nullable()
      table.string('claimed_by', 64).nullable()
      table.datetime('claimed_until', { precision: 3 }).nullable()
      table.datetime('last_attempt_at', { precision: 3 }).nullable()
      table.smallint('last_http_status').unsigned().nullable()
      table.string('last_error', 500).nullable()
      table.datetime('next_attempt_at', { precision: 3 }).nullable()
      table.index(['platform_order_id'])
    })

    /** One row per POST (or refused POST) of a callback, never updated. */
    this.schema.createTable('callback_attempts', (table) => {
      table.bigIncrements('id')
      table
        .bigInteger('callback_outbox_id')
        .unsigned()
        .notNullable()
        .references('callback_outbox.id')
      table.integer('series').unsigned().notNullable()
      table.tinyint('attempt').unsigned().notNullable() // 1..5 within the series
      table.string('job_id', 64).notNullable()
      table.string('target_address', 45).nullable() // IP actually connected to
      table.smallint('http_status').unsigned().nullable()
      table.integer('latency_ms').unsigned().notNullable()
      table.text('response_excerpt').nullable() // first 1 KiB of the answer
      table.string('error', 500).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.index(['callback_outbox_id', 'series', 'attempt'])
    })
  }

  async down() {
    this.schema.dropTable('callback_attempts')
    this.schema.alterTable('callback_outbox', (table) => {
      table.dropIndex(['platform_order_id'])
      table.dropColumns(
        'signature',
        'series',
        'enqueued_at',
        'job_id',
        'claimed_by',
        'claimed_until',
        'last_attempt_at',
        'last_http_status',
        'last_error',
        'next_attempt_at'
      )
    })
  }
}
