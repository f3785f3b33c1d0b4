import { BaseSchema } from '@adonisjs/lucid/schema'

/** Append-only record of operator actions (CLI and admin panel). */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('audit_logs', (table) => {
      table.bigIncrements('id')
      table.string('actor', 120).notNullable() // "cli:<os user>" or "admin:<email>"
      table.string('action', 64).notNullable()
      table.string('subject_type', 40).nullable()
      table.string('subject_id', 64).nullable()
      table.json('details').nullable() // never credentials
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.index(['subject_type', 'subject_id'])
    })
  }

  async down() {
    this.schema.dropTable('audit_logs')
  }
}
