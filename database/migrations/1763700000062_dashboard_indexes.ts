import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The back-office dashboard (app/admin/queries/dashboard.ts) sums the last
 * 7 days of each table on every view. Each index below starts with the
 * datetime the dashboard reads a range of and carries the columns the sums
 * use, so a figure is read from the index alone (no row lookups) and its cost
 * follows the week's orders, not the table (docs/benchmarks.md):
 * - payment_orders and payout_orders per day of creation: status, amount
 *   (and a payment's error_reason, to tell an expiry from a refusal);
 * - statement_lines by time of match: the order and the bank line's time;
 * - callback_attempts by time: the HTTP status;
 * - open statement lines by status and age of import;
 * - payments awaiting review, to reach their undecided slips without reading
 *   every order.
 *
 * dashboard_daily_rollups keeps each past day's figures (JSON, per figure and
 * Bangkok day) so that a view reads the orders of today only, plus at most
 * one past day being refreshed (app/admin/queries/dashboard.ts byDay).
 * It is a cache: emptying it loses nothing.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('dashboard_daily_rollups', (table) => {
      table.string('figure', 32).notNullable()
      table.specificType('day', 'CHAR(10)').notNullable() // yyyy-mm-dd in Bangkok
      table.json('figures').notNullable()
      table.datetime('computed_at', { precision: 3 }).notNullable()
      table.primary(['figure', 'day'])
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.index(
        ['created_at', 'status', 'amount', 'error_reason'],
        'payment_orders_dashboard_index'
      )
      table.index(['awaiting_review'], 'payment_orders_awaiting_review_index')
    })
    this.schema.alterTable('payout_orders', (table) => {
      table.index(['created_at', 'status', 'amount'], 'payout_orders_dashboard_index')
    })
    this.schema.alterTable('statement_lines', (table) => {
      table.index(
        ['matched_at', 'order_type', 'order_id', 'line_at'],
        'statement_lines_matched_at_index'
      )
      table.index(['status', 'created_at'], 'statement_lines_status_created_index')
    })
    this.schema.alterTable('callback_attempts', (table) => {
      table.index(['created_at', 'http_status'], 'callback_attempts_dashboard_index')
    })
  }

  async down() {
    this.schema.alterTable('callback_attempts', (table) => {
      table.dropIndex([], 'callback_attempts_dashboard_index')
    })
    this.schema.alterTable('statement_lines', (table) => {
      table.dropIndex([], 'statement_lines_status_created_index')
      table.dropIndex([], 'statement_lines_matched_at_index')
    })
    this.schema.alterTable('payout_orders', (table) => {
      table.dropIndex([], 'payout_orders_dashboard_index')
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex([], 'payment_orders_awaiting_review_index')
      table.dropIndex([], 'payment_orders_dashboard_index')
    })
    this.schema.dropTable('dashboard_daily_rollups')
  }
}
