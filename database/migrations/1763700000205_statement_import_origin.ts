import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Where each statement file came from: `upload` (the back-office), `command`
 * (`statements:import`), or a bank channel the worker fetched it from
 * (`sftp`, `imap`), with the channel's own name for it (the remote path, the
 * mail's Message-ID and attachment name). A person's file above a platform's
 * threshold waits for a second operator; a file the bank's own channel
 * delivered does not (docs/reconciliation.md).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_imports', (table) => {
      table.string('origin', 16).notNullable().defaultTo('upload')
      table.string('origin_detail', 512).nullable()
    })
    this.defer(async (db) => {
      await db.rawQuery("UPDATE statement_imports SET origin = 'command' WHERE actor LIKE 'cli:%'")
    })
  }

  async down() {
    this.schema.alterTable('statement_imports', (table) => {
      table.dropColumn('origin')
      table.dropColumn('origin_detail')
    })
  }
}
