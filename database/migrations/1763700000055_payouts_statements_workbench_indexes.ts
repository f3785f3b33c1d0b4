import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The back-office's payouts and statements pages:
 * - the match rate per deposit account and day reads the lines of the last
 *   14 days by their time; the index covers the query (account and status
 *   included), so it never reads the table's rows;
 * - a merchant flagged with a negative balance is listed with its latest
 *   successful payouts, read newest first from the merchant's own rows.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_lines', (table) => {
      table.index(['line_at', 'deposit_account_id', 'status'], 'statement_lines_match_rate_index')
    })
    this.schema.alterTable('payout_orders', (table) => {
      table.index(['merchant_id', 'status', 'done_at'], 'payout_orders_merchant_status_index')
    })
  }

  async down() {
    this.schema.alterTable('payout_orders', (table) => {
      table.dropIndex(['merchant_id', 'status', 'done_at'], 'payout_orders_merchant_status_index')
    })
    this.schema.alterTable('statement_lines', (table) => {
      table.dropIndex(
        ['line_at', 'deposit_account_id', 'status'],
        'statement_lines_match_rate_index'
      )
    })
  }
}
