import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A tamper-evident audit log (app/core/audit_chain.ts, docs/decisions.md,
 * "Tamper-evident audit log"):
 * - audit_seals: one seal per audit row, written only by the sealer, in
 *   chain order (seq): hash = HMAC(key from APP_KEY, prev_hash || the row's
 *   canonical JSON). Append-only, enforced by triggers as audit_logs is;
 * - audit_chain_head: one row (id 1), the chain's start (the first audit row
 *   sealed) and its last seal, with a MAC; the sealer locks it to append;
 * - audit_verify_runs: each audit:verify (the worker's daily run and the
 *   command's), read by monitoring and by the back-office's audit page.
 *
 * Rows written before this migration are not chained: the chain starts with
 * the `audit.chain_start` row it writes, the first one sealed.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('audit_seals', (table) => {
      // Assigned by the sealer (head's last_seq + 1): the chain's order, with no gap.
      table.bigIncrements('seq')
      table.bigInteger('audit_log_id').unsigned().notNullable().unique()
      table.specificType('prev_hash', 'CHAR(64)').notNullable()
      table.specificType('hash', 'CHAR(64)').notNullable()
      // A short keyed digest per field: what differs, when a row no longer matches.
      table.json('field_digests').notNullable()
      table.datetime('sealed_at', { precision: 3 }).notNullable()
    })

    this.schema.createTable('audit_chain_head', (table) => {
      table.tinyint('id').unsigned().primary()
      table.bigInteger('start_audit_id').unsigned().notNullable()
      table.datetime('started_at', { precision: 3 }).notNullable()
      table.bigInteger('last_seq').unsigned().notNullable().defaultTo(0)
      table.specificType('last_hash', 'CHAR(64)').notNullable()
      table.specificType('mac', 'CHAR(64)').notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
    })

    this.schema.createTable('audit_verify_runs', (table) => {
      table.bigIncrements('id')
      // 0: every seal matches its row and nothing old is unsealed.
      table.integer('problems').unsigned().notNullable()
      table.bigInteger('sealed').unsigned().notNullable()
      table.integer('unsealed').unsigned().notNullable()
      table.bigInteger('start_audit_id').unsigned().nullable()
      // The first problems (the rows they name), for the audit page and whoever answers the alert.
      table.json('result').notNullable()
      table.string('actor', 120).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
    })

    this.defer(async (db) => {
      for (const event of ['UPDATE', 'DELETE']) {
        await db.rawQuery(
          `CREATE TRIGGER audit_seals_no_${event.toLowerCase()} BEFORE ${event} ON audit_seals
           FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_seals is append-only'`
        )
      }
      const { startAuditChain } = await import('#core/audit_chain')
      await startAuditChain(db)
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.rawQuery('DROP TRIGGER IF EXISTS audit_seals_no_update')
      await db.rawQuery('DROP TRIGGER IF EXISTS audit_seals_no_delete')
    })
    this.schema.dropTable('audit_verify_runs')
    this.schema.dropTable('audit_chain_head')
    this.schema.dropTable('audit_seals')
  }
}
