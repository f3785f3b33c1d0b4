import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Two indexes every order insert kept up to date and no query needs any more
 * (each index is written on every insert; docs/performance.md):
 * - payment_orders (created_at): a prefix of payment_orders_dashboard_index
 *   (created_at, status, amount, error_reason), which serves every range and
 *   ordering by created_at the other did;
 * - payout_orders (merchant_id, bank, account_no, amount, created_at): the
 *   duplicate-withdrawal rule reads payout_duplicate_guards since migration
 *   1763700000080; the merchant_id foreign key keeps
 *   payout_orders_merchant_created_index and payout_orders_merchant_status_index.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex([], 'payment_orders_created_at_index')
    })
    this.schema.alterTable('payout_orders', (table) => {
      table.dropIndex([], 'payout_orders_duplicate_idx')
    })
  }

  async down() {
    this.schema.alterTable('payout_orders', (table) => {
      table.index(
        ['merchant_id', 'bank', 'account_no', 'amount', 'created_at'],
        'payout_orders_duplicate_idx'
      )
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.index(['created_at'], 'payment_orders_created_at_index')
    })
  }
}
