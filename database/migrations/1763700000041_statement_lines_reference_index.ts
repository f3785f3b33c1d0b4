import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Slip verification looks statement lines up by reference (a slip's
 * transaction reference), on the order's account and, for slip reuse, on
 * every account: without an index each slip reads every line.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_lines', (table) => {
      table.index(['reference'], 'statement_lines_reference_index')
    })
  }

  async down() {
    this.schema.alterTable('statement_lines', (table) => {
      table.dropIndex(['reference'], 'statement_lines_reference_index')
    })
  }
}
