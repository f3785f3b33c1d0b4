import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * A bank transfer has one identity, what the bank says of it
 * (docs/reconciliation.md, "One transfer, one line"):
 *
 * - statement_lines.transfer_key, unique across every account: the bank's
 *   transaction reference with the direction, or (account, direction,
 *   amount, running balance, bank minute) where the statement prints a
 *   balance; NULL where it says neither (the line is then known by its
 *   fingerprint in its account, as before). A second line of the same
 *   transfer, re-exported with another description or time precision, is
 *   refused by the database.
 * - statement_lines.balance_after: the running balance the bank printed
 *   after the line, satang.
 *
 * Lines already stored get their key from their transaction reference (a
 * trans_ref that is only a copy of the line's reference is not the bank's).
 * Where one transfer was already stored twice, the first line keeps the key
 * and the others are reported, not merged: an operator decides on them.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_lines', (table) => {
      table.string('transfer_key', 160).nullable()
      table.bigInteger('balance_after').nullable()
    })
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE statement_lines MODIFY transfer_key VARCHAR(160) COLLATE ${collation} NULL`
      )
      await db.rawQuery(
        `UPDATE statement_lines AS line
           JOIN (SELECT id, ROW_NUMBER() OVER (PARTITION BY direction, trans_ref ORDER BY id) AS nth
                   FROM statement_lines
                  WHERE trans_ref IS NOT NULL AND NOT (reference <=> trans_ref)) AS known
             ON known.id = line.id AND known.nth = 1
            SET line.transfer_key = CONCAT('ref|', line.direction, '|', line.trans_ref)`
      )
      const [twice] = await db.rawQuery(
        `SELECT direction, trans_ref, GROUP_CONCAT(id ORDER BY id) AS line_ids
           FROM statement_lines
          WHERE trans_ref IS NOT NULL AND NOT (reference <=> trans_ref)
          GROUP BY direction, trans_ref HAVING COUNT(*) > 1`
      )
      for (const row of twice as Array<{
        direction: string
        trans_ref: string
        line_ids: string
      }>) {
        console.warn(
          `statement lines ${row.line_ids} are one ${row.direction} transfer (${row.trans_ref}): ` +
            'the first keeps it; check how the others were decided'
        )
      }
      await db.rawQuery(
        'ALTER TABLE statement_lines ADD UNIQUE statement_lines_transfer_key_unique (transfer_key)'
      )
    })
  }

  async down() {
    this.schema.alterTable('statement_lines', (table) => {
      table.dropUnique(['transfer_key'], 'statement_lines_transfer_key_unique')
      table.dropColumn('transfer_key')
      table.dropColumn('balance_after')
    })
  }
}
