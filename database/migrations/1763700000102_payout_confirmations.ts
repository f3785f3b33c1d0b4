import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * Money out, tied to the bank like money in (docs/reconciliation.md,
 * "Money out"): one row per transfer the gateway made or must make (a
 * payout that succeeded, a line returned to the payer), confirmed by the
 * debit line that shows it left the bank. statement_line_id is unique: a
 * debit line confirms one transfer; NULL is an open item until the line
 * arrives. An operator explains a debit no transfer claims (a bank charge)
 * with a row of its own, so that every debit line is accounted for.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('payout_confirmations', (table) => {
      table.bigIncrements('id')
      table
        .enum('path', ['bank_line', 'connector', 'by_hand', 'return', 'bank_charge'])
        .notNullable()
      table
        .bigInteger('payout_order_id')
        .unsigned()
        .nullable()
        .unique()
        .references('payout_orders.id')
      table
        .bigInteger('returned_line_id')
        .unsigned()
        .nullable()
        .unique()
        .references('statement_lines.id')
      table
        .bigInteger('statement_line_id')
        .unsigned()
        .nullable()
        .unique()
        .references('statement_lines.id')
      // The bank account the money left: known for returns, and once confirmed.
      table.integer('deposit_account_id').unsigned().nullable().references('deposit_accounts.id')
      table.bigInteger('amount').notNullable()
      table.string('actor', 120).notNullable()
      table.text('reason').nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('confirmed_at', { precision: 3 }).nullable()
      table.index(['deposit_account_id', 'statement_line_id'], 'payout_confirmations_open_index')
    })
    // An operator explains a debit no transfer claims.
    this.schema.raw(
      "ALTER TABLE statement_lines MODIFY decision ENUM('attached', 'credited', 'returned', 'explained') NULL"
    )
    this.defer(async (db) => {
      await upgradePayoutConfirmations(db)
    })
  }

  async down() {
    this.schema.raw(
      "ALTER TABLE statement_lines MODIFY decision ENUM('attached', 'credited', 'returned') NULL"
    )
    this.schema.dropTable('payout_confirmations')
  }
}

/**
 * The transfers out an installation made before this existed: every
 * successful payout (confirmed by the debit line already matched to it, or
 * open), every line returned to its payer (open: its debit line, if it came,
 * waits unmatched for an operator to confirm it). Adds rows only; a second
 * run adds nothing. Unexplained debits are left for reconcile:verify to name.
 */
export async function upgradePayoutConfirmations(db: QueryClientContract) {
  await db.rawQuery(
    `INSERT IGNORE INTO payout_confirmations (path, payout_order_id, statement_line_id,
       deposit_account_id, amount, actor, created_at, confirmed_at)
     SELECT CASE WHEN l.id IS NULL THEN 'connector' ELSE 'bank_line' END, o.id, l.id,
            l.deposit_account_id, o.amount, 'upgrade', COALESCE(o.done_at, o.updated_at),
            CASE WHEN l.id IS NULL THEN NULL ELSE COALESCE(l.matched_at, l.created_at) END
       FROM payout_orders o
       LEFT JOIN statement_lines l ON l.order_type = o.kind AND l.order_id = o.id
        AND l.direction = 'debit'
      WHERE o.status = 'success'`
  )
  await db.rawQuery(
    `INSERT IGNORE INTO payout_confirmations (path, returned_line_id, deposit_account_id, amount,
       actor, created_at)
     SELECT 'return', l.id, l.deposit_account_id, l.amount, COALESCE(l.decided_by_actor, 'upgrade'),
            COALESCE(l.decided_at, l.created_at)
       FROM statement_lines l WHERE l.direction = 'credit' AND l.decision = 'returned'`
  )
}
