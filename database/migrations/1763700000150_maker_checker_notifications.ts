import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * No single insider (docs/decisions.md, "Four eyes on where money goes"):
 *
 * - approval_requests.change_before / change_after: a money-directing
 *   change as the request card shows it (the values now and the ones asked),
 *   computed when the request is opened; the request still runs its stored
 *   input, validated and checked again on approval.
 * - notifications: every sensitive request and every break-glass use (a
 *   money-directing change made from the server's shell), shown to every
 *   admin until acknowledged and mailed to every other admin (mailed_at:
 *   the sweep that sent them).
 * - notification_acks: who acknowledged which notice.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('approval_requests', (table) => {
      table.json('change_before').nullable()
      table.json('change_after').nullable()
    })
    this.schema.createTable('notifications', (table) => {
      table.bigIncrements('id')
      table.enum('kind', ['request', 'break_glass']).notNullable()
      table.string('action', 80).notNullable()
      table.string('summary', 1000).notNullable()
      table.string('actor', 160).notNullable()
      table.integer('operator_id').unsigned().nullable()
      table.string('target_type', 40).nullable()
      table.string('target_id', 120).nullable()
      table.bigInteger('approval_request_id').unsigned().nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('mailed_at', { precision: 3 }).nullable()
      table.index(['mailed_at'], 'notifications_mailed_at_index')
      table.index(['created_at'], 'notifications_created_at_index')
    })
    this.schema.createTable('notification_acks', (table) => {
      table.bigInteger('notification_id').unsigned().notNullable()
      table.integer('operator_id').unsigned().notNullable()
      table.datetime('acked_at', { precision: 3 }).notNullable()
      table.primary(['notification_id', 'operator_id'])
      table.index(['operator_id'], 'notification_acks_operator_index')
    })
  }

  async down() {
    this.schema.dropTable('notification_acks')
    this.schema.dropTable('notifications')
    this.schema.alterTable('approval_requests', (table) => {
      table.dropColumn('change_before')
      table.dropColumn('change_after')
    })
  }
}
