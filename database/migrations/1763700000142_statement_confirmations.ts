import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * No money on one person's file (docs/reconciliation.md, "A file imported by
 * hand"): a statement imported by hand whose lines would move more than a
 * platform's four-eyes threshold waits for a second operator.
 *
 * - statement_imports.status: confirmed (its lines count and are matched),
 *   awaiting_confirmation (its lines are kept, held: not matched, not in the
 *   ledger's bank account), or discarded (a second operator turned the file
 *   down, or nobody confirmed it in time: its lines stay visible, and free
 *   the transfers they named for a genuine file).
 * - moves_amount: what its lines would have moved when it was imported
 *   (payments paid, receivables cleared, payouts confirmed or returned).
 * - confirmation_request_id, decided_by, decided_at, discard_reason: the
 *   four-eyes request and its outcome.
 * - statement_lines.status: held and discarded, the lines of such files.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_imports', (table) => {
      table
        .enum('status', ['confirmed', 'awaiting_confirmation', 'discarded'])
        .notNullable()
        .defaultTo('confirmed')
      table.bigInteger('moves_amount').nullable()
      table.bigInteger('confirmation_request_id').unsigned().nullable()
      table.string('decided_by', 120).nullable()
      table.datetime('decided_at', { precision: 3 }).nullable()
      table.string('discard_reason', 1000).nullable()
      table.index(['status'], 'statement_imports_status_index')
    })
    this.defer(async (db) => {
      await db.rawQuery(
        "ALTER TABLE statement_lines MODIFY status ENUM('new', 'matched', 'unmatched', 'late', 'held', 'discarded') NOT NULL DEFAULT 'new'"
      )
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.rawQuery(
        "ALTER TABLE statement_lines MODIFY status ENUM('new', 'matched', 'unmatched', 'late') NOT NULL DEFAULT 'new'"
      )
    })
    this.schema.alterTable('statement_imports', (table) => {
      table.dropIndex(['status'], 'statement_imports_status_index')
      table.dropColumn('status')
      table.dropColumn('moves_amount')
      table.dropColumn('confirmation_request_id')
      table.dropColumn('decided_by')
      table.dropColumn('decided_at')
      table.dropColumn('discard_reason')
    })
  }
}
