import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    /** One imported statement file (or one sandbox-bank transfer). */
    this.schema.createTable('statement_imports', (table) => {
      table.bigIncrements('id')
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.string('layout', 16).notNullable()
      table.string('file_name', 255).notNullable()
      table.specificType('file_sha256', 'CHAR(64)').notNullable()
      table.integer('line_count').unsigned().notNullable()
      table.integer('new_lines').unsigned().notNullable().defaultTo(0)
      table.string('actor', 120).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
    })

    /**
     * Bank statement lines of deposit accounts. The fingerprint makes an import
     * idempotent; (order_type, order_id) is unique so an order is settled by one
     * line at most, whatever the number of importers.
     */
    this.schema.createTable('statement_lines', (table) => {
      table.bigIncrements('id')
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.bigInteger('import_id').unsigned().notNullable().references('statement_imports.id')
      table.specificType('fingerprint', 'CHAR(64)').notNullable()
      table.datetime('line_at', { precision: 3 }).notNullable()
      table.enum('direction', ['credit', 'debit']).notNullable()
      table.bigInteger('amount').notNullable()
      table.string('reference', 64).nullable()
      table.string('description', 255).notNullable().defaultTo('')
      // unmatched: waits for an operator; late: pays an order that had already expired
      table.enum('status', ['new', 'matched', 'unmatched', 'late']).notNullable().defaultTo('new')
      table.string('note', 255).nullable()
      table.enum('order_type', ['payment', 'withdraw', 'settlement']).nullable()
      table.bigInteger('order_id').unsigned().nullable()
      table.datetime('matched_at', { precision: 3 }).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.unique(['deposit_account_id', 'fingerprint'])
      table.unique(['order_type', 'order_id'])
      table.index(['import_id'])
      table.index(['status', 'deposit_account_id'])
    })
  }

  async down() {
    this.schema.dropTable('statement_lines')
    this.schema.dropTable('statement_imports')
  }
}
