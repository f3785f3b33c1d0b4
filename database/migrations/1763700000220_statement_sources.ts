import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Statements fetched from the bank's own channel (docs/reconciliation.md,
 * "Statements fetched from the bank"):
 *
 * - statement_sources: per deposit account, where the worker fetches its
 *   statement files: an SFTP directory (key authentication, the server's
 *   host key pinned by its SHA256 fingerprint) or an IMAP mailbox (mails
 *   from the bank's sender address, over TLS with the certificate
 *   verified). The SSH private key or IMAP password is encrypted with
 *   APP_KEY. Where statements come from changes with four eyes
 *   (`statement_source.save`); the fetch state (last fetch, last success,
 *   the error, the failure streak, the day a missing statement was told)
 *   and a lease (one fetch of a source at a time) live on the row.
 * - statement_source_secrets: the encrypted secret of a change that waits
 *   for a second admin, so that the request (and its audit row) names it
 *   by id and never holds it; deleted when the request ends.
 * - statement_fetched_files: each file fetched, kept (drive) and imported
 *   once per account: UNIQUE (deposit_account_id, sha256) is the claim a
 *   fetch takes before importing (two fetches, two workers: one import).
 *   A claim whose fetch died is taken over after `claimed_until`.
 * - statement_remote_files: the remote files (or mail attachments) a
 *   source has already fetched, so that a listing fetches only new ones.
 * - notifications.kind gains `alert`: a fetch failing, a statement missing.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('statement_sources', (table) => {
      table.increments('id')
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.enum('kind', ['sftp', 'imap']).notNullable()
      table.string('name', 80).notNullable()
      table.string('host', 255).notNullable()
      table.integer('port').unsigned().notNullable()
      table.string('username', 255).notNullable()
      table.text('secret_encrypted').notNullable()
      table.string('host_key_fingerprint', 100).nullable()
      table.enum('imap_tls', ['implicit', 'starttls']).nullable()
      table.text('tls_ca').nullable()
      table.string('remote_dir', 500).nullable()
      table.string('file_pattern', 200).nullable()
      table.boolean('remove_after_import').notNullable().defaultTo(false)
      table.string('mailbox', 200).nullable()
      table.string('sender', 255).nullable()
      table.string('layout', 32).nullable()
      table.integer('every_minutes').unsigned().notNullable().defaultTo(15)
      table.string('statement_due_by', 5).nullable()
      table.boolean('enabled').notNullable().defaultTo(true)
      table.datetime('last_fetched_at', { precision: 3 }).nullable()
      table.datetime('last_success_at', { precision: 3 }).nullable()
      table.string('last_error', 1000).nullable()
      table.integer('consecutive_failures').unsigned().notNullable().defaultTo(0)
      table.integer('failures_total').unsigned().notNullable().defaultTo(0)
      table.string('missing_notified_day', 10).nullable()
      table.bigInteger('imap_uid_validity').unsigned().nullable()
      table.bigInteger('imap_last_uid').unsigned().nullable()
      table.datetime('fetch_lease_until', { precision: 3 }).nullable()
      table.string('fetch_lease_token', 36).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      table.unique(['deposit_account_id', 'name'], { indexName: 'statement_sources_name_unique' })
    })

    this.schema.createTable('statement_source_secrets', (table) => {
      table.increments('id')
      table.text('secret_encrypted').notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
    })

    this.schema.createTable('statement_fetched_files', (table) => {
      table.bigIncrements('id')
      table.integer('source_id').unsigned().notNullable().references('statement_sources.id')
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.enum('channel', ['sftp', 'imap']).notNullable()
      /** The remote path, or the mail's Message-ID. */
      table.string('remote_name', 512).notNullable()
      table.string('file_name', 255).notNullable()
      table.specificType('sha256', 'CHAR(64)').notNullable()
      table.integer('size').unsigned().notNullable()
      table.string('storage_key', 255).notNullable()
      table.enum('status', ['claimed', 'imported', 'failed']).notNullable()
      table.string('claim_token', 36).notNullable()
      table.datetime('claimed_until', { precision: 3 }).notNullable()
      table.integer('attempts').unsigned().notNullable().defaultTo(1)
      table.bigInteger('import_id').unsigned().nullable().references('statement_imports.id')
      table.string('error', 1000).nullable()
      table.datetime('fetched_at', { precision: 3 }).notNullable()
      table.datetime('imported_at', { precision: 3 }).nullable()
      table.unique(['deposit_account_id', 'sha256'], {
        indexName: 'statement_fetched_files_content_unique',
      })
      table.index(['source_id', 'id'], 'statement_fetched_files_source_index')
      table.index(['deposit_account_id', 'fetched_at'], 'statement_fetched_files_day_index')
      table.index(['status', 'claimed_until'], 'statement_fetched_files_claim_index')
    })

    this.schema.createTable('statement_remote_files', (table) => {
      table.bigIncrements('id')
      table.integer('source_id').unsigned().notNullable().references('statement_sources.id')
      /** SHA-256 of the remote identity: path, size and modification time. */
      table.specificType('remote_key', 'CHAR(64)').notNullable()
      table.string('remote_name', 512).notNullable()
      table.bigInteger('fetched_file_id').unsigned().notNullable()
      table.datetime('seen_at', { precision: 3 }).notNullable()
      table.unique(['source_id', 'remote_key'], { indexName: 'statement_remote_files_unique' })
    })

    this.schema.raw(
      "ALTER TABLE notifications MODIFY kind ENUM('request', 'break_glass', 'alert') NOT NULL"
    )
  }

  async down() {
    this.schema.raw("ALTER TABLE notifications MODIFY kind ENUM('request', 'break_glass') NOT NULL")
    this.schema.dropTable('statement_remote_files')
    this.schema.dropTable('statement_fetched_files')
    this.schema.dropTable('statement_source_secrets')
    this.schema.dropTable('statement_sources')
  }
}
