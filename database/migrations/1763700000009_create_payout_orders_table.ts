import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    /**
     * Withdrawals (marker W, to an end customer) and THB settlements (marker M,
     * to the merchant's own account) share one table: same fields, same money
     * movements, same connectors. `status` is the internal state; the API
     * shows open / success / failed.
     */
    this.schema.createTable('payout_orders', (table) => {
      table.bigIncrements('id')
      table.specificType('platform_order_id', 'CHAR(24)').notNullable().unique()
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.enum('kind', ['withdraw', 'settlement']).notNullable()
      table.string('merchant_order_id', 40).notNullable()
      table.bigInteger('amount').notNullable()
      table.bigInteger('fee').notNullable()
      table.string('bank', 8).notNullable()
      table.string('account_no', 15).notNullable()
      table.string('account_name', 120).notNullable()
      table.string('notify_url', 2048).nullable()
      table
        .enum('status', [
          'new',
          'queue',
          'pending',
          'success',
          'failed',
          'error',
          'cancelled',
          'rejected',
        ])
        .notNullable()
      // held: amount + fee in freeze_balance; released: returned to balance by the
      // 10-minute timeout while the order stays open; consumed / returned: final.
      table.enum('hold_state', ['held', 'released', 'consumed', 'returned']).notNullable()
      table.datetime('hold_expires_at', { precision: 3 }).notNullable()
      table.string('connector', 32).notNullable()
      table.string('connector_reference', 64).nullable()
      table.string('batch_id', 40).nullable()
      table.string('failure_reason', 64).nullable()
      table.datetime('order_at', { precision: 3 }).notNullable()
      table.datetime('done_at', { precision: 3 }).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      table.index(
        ['merchant_id', 'bank', 'account_no', 'amount', 'created_at'],
        'payout_orders_duplicate_idx'
      )
      table.index(['status', 'hold_state', 'hold_expires_at'])
      table.index(['connector', 'status'])
    })

    /** When a merchant has rows here, settlements may only go to these accounts. */
    this.schema.createTable('merchant_settlement_accounts', (table) => {
      table.increments('id')
      table
        .integer('merchant_id')
        .unsigned()
        .notNullable()
        .references('merchants.id')
        .onDelete('CASCADE')
      table.string('bank', 8).notNullable()
      table.string('account_no', 15).notNullable()
      table.datetime('created_at').notNullable()
      table.unique(['merchant_id', 'bank', 'account_no'])
    })
  }

  async down() {
    this.schema.dropTable('merchant_settlement_accounts')
    this.schema.dropTable('payout_orders')
  }
}
