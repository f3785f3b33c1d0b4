import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Who made each operator what they are (docs/decisions.md, "Four eyes:
 * operators"): nobody approves a request through an account the requester
 * created, raised or re-enabled.
 *
 * - created_by / created_by_actor: the operator who asked for the account
 *   (null: from the server's shell, or before this was recorded) and the
 *   actor as the audit log names it. Operators that existed before the
 *   upgrade are recorded as "unknown".
 * - raised_by / raised_by_actor / raised_at: the last raise of the role.
 * - enabled_by / enabled_by_actor / enabled_at: the last re-enabling.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('operators', (table) => {
      table.integer('created_by').unsigned().nullable().references('operators.id')
      table.string('created_by_actor', 160).notNullable().defaultTo('unknown')
      table.integer('raised_by').unsigned().nullable().references('operators.id')
      table.string('raised_by_actor', 160).nullable()
      table.datetime('raised_at', { precision: 3 }).nullable()
      table.integer('enabled_by').unsigned().nullable().references('operators.id')
      table.string('enabled_by_actor', 160).nullable()
      table.datetime('enabled_at', { precision: 3 }).nullable()
    })
  }

  async down() {
    this.schema.alterTable('operators', (table) => {
      table.dropForeign(['created_by'])
      table.dropForeign(['raised_by'])
      table.dropForeign(['enabled_by'])
      table.dropColumn('created_by')
      table.dropColumn('created_by_actor')
      table.dropColumn('raised_by')
      table.dropColumn('raised_by_actor')
      table.dropColumn('raised_at')
      table.dropColumn('enabled_by')
      table.dropColumn('enabled_by_actor')
      table.dropColumn('enabled_at')
    })
  }
}
