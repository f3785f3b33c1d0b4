import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Statement layouts operators define in the back-office (docs/reconciliation.md,
 * "Layouts operators define"): a layout is data, versioned. Each saved version
 * waits for a second admin (`statement_layout.save`); only an approved version
 * exists here, and the layout's `current_version` is the one imports use.
 *
 * - statement_layouts: the layout's name (unique; what `--layout` and the
 *   upload form take), the bank it reads, its current version.
 * - statement_layout_versions: every approved version's definition (JSON,
 *   validated by the schema in app/reconciliation/layouts/definition.ts), who
 *   saved it and who approved it. Never updated: a change is a new version.
 * - deposit_accounts.statement_layout_id: the layout the account's files are
 *   read with when the import names none (null: neutral).
 * - statement_imports.layout: wide enough for `name@v12`.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('statement_layouts', (table) => {
      table.increments('id')
      table.string('name', 40).notNullable().unique()
      table.string('bank', 16).nullable()
      table.integer('current_version').unsigned().notNullable()
      table.string('created_by', 120).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
    })
    this.schema.createTable('statement_layout_versions', (table) => {
      table.increments('id')
      table
        .integer('statement_layout_id')
        .unsigned()
        .notNullable()
        .references('statement_layouts.id')
      table.integer('version').unsigned().notNullable()
      table.json('definition').notNullable()
      table.string('saved_by', 120).notNullable()
      table.string('approved_by', 120).nullable()
      table.bigInteger('approval_request_id').unsigned().nullable()
      table.string('comment', 500).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.unique(['statement_layout_id', 'version'])
    })
    this.schema.alterTable('deposit_accounts', (table) => {
      table.integer('statement_layout_id').unsigned().nullable().references('statement_layouts.id')
    })
    this.schema.alterTable('statement_imports', (table) => {
      table.string('layout', 64).notNullable().alter()
    })
  }

  async down() {
    this.schema.alterTable('statement_imports', (table) => {
      table.string('layout', 16).notNullable().alter()
    })
    this.schema.alterTable('deposit_accounts', (table) => {
      table.dropForeign(['statement_layout_id'])
      table.dropColumn('statement_layout_id')
    })
    this.schema.dropTable('statement_layout_versions')
    this.schema.dropTable('statement_layouts')
  }
}
