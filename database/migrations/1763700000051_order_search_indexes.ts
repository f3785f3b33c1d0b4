import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The back-office order search (app/admin/queries/order_search.ts) and its
 * saved views.
 *
 * Indexes: the list shows the newest orders first (or the largest), alone
 * or within a merchant, and finds an order by merchant_order_id or by the
 * customer's bank account without knowing the merchant. Without these, each
 * of those reads every order (and a date range or a page sorts all of them).
 * Payout orders are always searched within one kind (withdrawals or
 * settlements), so kind leads their time and amount indexes.
 *
 * saved_order_views: a named filter of the orders list, shared with every
 * operator; only the operator who saved one deletes it.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_orders', (table) => {
      table.index(['created_at'], 'payment_orders_created_at_index')
      table.index(['merchant_id', 'created_at'], 'payment_orders_merchant_created_index')
      table.index(['merchant_order_id'], 'payment_orders_merchant_order_id_index')
      table.index(['customer_account_no'], 'payment_orders_customer_account_index')
      table.index(['amount'], 'payment_orders_amount_index')
    })
    this.schema.alterTable('payout_orders', (table) => {
      table.index(['kind', 'created_at'], 'payout_orders_kind_created_index')
      table.index(['merchant_id', 'kind', 'created_at'], 'payout_orders_merchant_created_index')
      table.index(['merchant_order_id'], 'payout_orders_merchant_order_id_index')
      table.index(['account_no'], 'payout_orders_account_no_index')
      table.index(['kind', 'amount'], 'payout_orders_kind_amount_index')
    })

    this.schema.createTable('saved_order_views', (table) => {
      table.increments('id')
      table.string('name', 80).notNullable()
      table.enum('kind', ['payments', 'withdrawals', 'settlements']).notNullable()
      // The list's query string (filters and sort), as the list reads it.
      table.string('query', 2000).notNullable()
      table.integer('created_by').unsigned().notNullable().references('operators.id')
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.unique(['kind', 'name'])
    })
  }

  async down() {
    this.schema.dropTable('saved_order_views')
    this.schema.alterTable('payout_orders', (table) => {
      table.dropIndex([], 'payout_orders_kind_created_index')
      table.dropIndex([], 'payout_orders_merchant_created_index')
      table.dropIndex([], 'payout_orders_merchant_order_id_index')
      table.dropIndex([], 'payout_orders_account_no_index')
      table.dropIndex([], 'payout_orders_kind_amount_index')
    })
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex([], 'payment_orders_created_at_index')
      table.dropIndex([], 'payment_orders_merchant_created_index')
      table.dropIndex([], 'payment_orders_merchant_order_id_index')
      table.dropIndex([], 'payment_orders_customer_account_index')
      table.dropIndex([], 'payment_orders_amount_index')
    })
  }
}
