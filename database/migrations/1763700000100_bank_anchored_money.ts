import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * Money that reaches a merchant is money the bank received, claimed once
 * (docs/reconciliation.md, "Bank money in the ledger"):
 *
 * - receipt_claims: one row per merchant credit from a deposit (or a return
 *   to the payer). statement_line_id is the bank receipt it claims, unique:
 *   the database refuses a second claim on a line, whichever path tries.
 *   While it is NULL the row is an open receivable (a payment marked paid
 *   before its bank line arrived) that a later line clears. trans_ref, the
 *   transaction a slip names, is unique too: one slip's transfer credits
 *   once; payment_order_id is unique: an order is credited once.
 * - statement_lines.trans_ref: the bank's transaction reference of a line
 *   (what a slip's mini-QR names), the key slips and lines are linked by.
 *   It replaces the index on reference, which only slip lookups read.
 * - ledger_transactions.value_date: the bank day (GMT+7) a bank posting
 *   belongs to, so the ledger's bank account is checked per account and day.
 * - payment_orders.paid_amount: the amount credited before the fee (what
 *   the bank received when an operator credits an underpayment), which the
 *   settlement moves and the PAID callback carries.
 * - reconciliation_runs: each check of the ledger against the bank.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_lines', (table) => {
      table.string('trans_ref', 64).nullable()
      table.dropIndex(['reference'], 'statement_lines_reference_index')
      table.index(['trans_ref'], 'statement_lines_trans_ref_index')
    })

    this.schema.alterTable('ledger_transactions', (table) => {
      table.date('value_date').nullable()
    })

    this.schema.alterTable('payment_orders', (table) => {
      table.bigInteger('paid_amount').nullable()
    })

    this.schema.createTable('receipt_claims', (table) => {
      table.bigIncrements('id')
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table
        .bigInteger('statement_line_id')
        .unsigned()
        .nullable()
        .unique()
        .references('statement_lines.id')
      table.string('trans_ref', 64).nullable().unique()
      table
        .bigInteger('payment_order_id')
        .unsigned()
        .nullable()
        .unique()
        .references('payment_orders.id')
      table.integer('merchant_id').unsigned().nullable().references('merchants.id')
      table
        .enum('path', [
          'match',
          'attach',
          'late_credit',
          'merchant_credit',
          'return',
          'slip_approval',
          'mark_paid',
          'upgrade',
        ])
        .notNullable()
      // exact: the bank received what the order asked; credit_received: an
      // operator credited a different amount than transfer_amount.
      table.enum('amount_policy', ['exact', 'credit_received']).notNullable().defaultTo('exact')
      table.bigInteger('expected_amount').notNullable()
      table.bigInteger('received_amount').nullable()
      table.bigInteger('credited').notNullable().defaultTo(0)
      table.bigInteger('fee').notNullable().defaultTo(0)
      // A receivable's line arrives in this window (the transfer's time).
      table.datetime('expected_from', { precision: 3 }).nullable()
      table.datetime('expected_to', { precision: 3 }).nullable()
      table.bigInteger('slip_id').unsigned().nullable().references('payment_slips.id')
      table.bigInteger('approval_request_id').unsigned().nullable()
      table.bigInteger('ledger_transaction_id').unsigned().nullable()
      table.string('actor', 120).notNullable()
      table.datetime('claimed_at', { precision: 3 }).notNullable()
      table.datetime('cleared_at', { precision: 3 }).nullable()
      // A receivable whose line never came, its credit taken back from the merchant.
      table.datetime('reversed_at', { precision: 3 }).nullable()
      table.string('reversed_by_actor', 120).nullable()
      // Open receivables of an account (statement_line_id IS NULL), and per-day figures.
      table.index(['deposit_account_id', 'statement_line_id'], 'receipt_claims_open_index')
      table.index(['ledger_transaction_id'], 'receipt_claims_posting_index')
    })

    // Each reconcile:verify run (the worker's daily one and the command's): the
    // back-office shows the last one's result.
    this.schema.createTable('reconciliation_runs', (table) => {
      table.bigIncrements('id')
      table.boolean('ok').notNullable()
      table.integer('problems').unsigned().notNullable()
      table.json('result').notNullable()
      table.string('actor', 120).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
    })

    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE statement_lines MODIFY trans_ref VARCHAR(64) COLLATE ${collation} NULL`
      )
      await db.rawQuery(
        `ALTER TABLE receipt_claims MODIFY trans_ref VARCHAR(64) COLLATE ${collation} NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('reconciliation_runs')
    this.schema.dropTable('receipt_claims')
    this.schema.alterTable('payment_orders', (table) => {
      table.dropColumn('paid_amount')
    })
    this.schema.alterTable('ledger_transactions', (table) => {
      table.dropColumn('value_date')
    })
    this.schema.alterTable('statement_lines', (table) => {
      table.dropIndex(['trans_ref'], 'statement_lines_trans_ref_index')
      table.index(['reference'], 'statement_lines_reference_index')
      table.dropColumn('trans_ref')
    })
  }
}
