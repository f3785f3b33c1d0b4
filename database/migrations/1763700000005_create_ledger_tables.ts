import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Double-entry ledger. Every balance change is one ledger_transaction whose
 * ledger_entries sum to zero. merchant_balances is the projection the API
 * reads and the row that conditional holds lock; it always equals the sum of
 * the entries of the merchant's available / frozen / unsettled accounts.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('ledger_accounts', (table) => {
      table.increments('id')
      // null for the gateway's own accounts (clearing, fee revenue, ...)
      table.integer('merchant_id').unsigned().nullable().references('merchants.id')
      // 'gateway' or the merchant's numeric id: lets one unique key cover both
      table.string('owner', 20).notNullable()
      table.string('code', 32).notNullable()
      table.datetime('created_at').notNullable()
      table.unique(['owner', 'code'])
    })

    this.schema.createTable('ledger_transactions', (table) => {
      table.bigIncrements('id')
      table.string('kind', 40).notNullable()
      table.string('reference_type', 20).nullable()
      table.string('reference_id', 40).nullable()
      table.string('description', 255).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.index(['reference_type', 'reference_id'])
    })

    this.schema.createTable('ledger_entries', (table) => {
      table.bigIncrements('id')
      table
        .bigInteger('transaction_id')
        .unsigned()
        .notNullable()
        .references('ledger_transactions.id')
      table.integer('account_id').unsigned().notNullable().references('ledger_accounts.id')
      table.bigInteger('amount').notNullable() // satang, signed: + increases the account
      table.index(['account_id'])
    })

    this.schema.createTable('merchant_balances', (table) => {
      table.integer('merchant_id').unsigned().primary().references('merchants.id')
      table.bigInteger('balance').notNullable().defaultTo(0)
      table.bigInteger('freeze_balance').notNullable().defaultTo(0)
      table.bigInteger('unsettle_balance').notNullable().defaultTo(0)
      table.datetime('updated_at', { precision: 3 }).notNullable()
    })
  }

  async down() {
    this.schema.dropTable('merchant_balances')
    this.schema.dropTable('ledger_entries')
    this.schema.dropTable('ledger_transactions')
    this.schema.dropTable('ledger_accounts')
  }
}
