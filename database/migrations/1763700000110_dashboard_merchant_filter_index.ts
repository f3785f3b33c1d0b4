import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The dashboard filtered by platform or merchant (app/admin/queries/
 * dashboard.ts) reads each day's deposits as `merchant_id IN (…)` and
 * a created_at range. payment_orders_merchant_created_index (merchant_id,
 * created_at) found those orders but read every row for its status and
 * amount; carrying status, amount and error_reason makes the figure an
 * index-only read, as the unfiltered one is. It replaces the narrower index
 * (a prefix of it, so the order search's merchant-and-date reads are
 * unchanged), so an insert still writes as many indexes as before.
 *
 * Payouts need none: their filtered day is read from
 * payout_orders_dashboard_index, the same read as unfiltered (a fifth of the
 * deposits' rows). Callbacks, matching and review reach the merchant by
 * primary key from the rows they already read.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_orders', (table) => {
      table.index(
        ['merchant_id', 'created_at', 'status', 'amount', 'error_reason'],
        'payment_orders_merchant_dashboard_index'
      )
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex([], 'payment_orders_merchant_created_index')
    })
  }

  async down() {
    this.schema.alterTable('payment_orders', (table) => {
      table.index(['merchant_id', 'created_at'], 'payment_orders_merchant_created_index')
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex([], 'payment_orders_merchant_dashboard_index')
    })
  }
}
