import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The deposit-account pool: bank accounts (and external payment providers)
 * that receive customers' deposits. Merchants draw from the accounts of their
 * deposit group. Limits are per account; null means unlimited.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('deposit_accounts', (table) => {
      table.increments('id')
      table.string('deposit_group', 64).notNullable()
      table.enum('channel', ['qr', 'transfer', 'external']).notNullable()
      table.string('bank', 8).notNullable()
      table.string('account_no', 20).notNullable()
      table.string('account_name', 120).notNullable()
      table.string('promptpay_id', 20).nullable() // mobile, national id or e-wallet id
      table.string('biller_id', 15).nullable() // set: bill-payment QR with a per-order ref1
      table.string('provider', 32).nullable() // external channel adapter name
      table.json('provider_config').nullable()
      table.bigInteger('min_amount').notNullable().defaultTo(2000)
      table.bigInteger('max_amount').nullable()
      table.integer('hourly_count_limit').unsigned().nullable()
      table.bigInteger('hourly_amount_limit').nullable()
      table.integer('daily_count_limit').unsigned().nullable()
      table.bigInteger('daily_amount_limit').nullable()
      // Largest satang adjustment added to make a transfer_amount unique on this account.
      table.integer('max_adjustment').unsigned().notNullable().defaultTo(999)
      table.integer('priority').notNullable().defaultTo(0)
      table.boolean('active').notNullable().defaultTo(true)
      table.datetime('created_at').notNullable()
      table.datetime('updated_at').notNullable()
      table.index(['deposit_group', 'active'])
    })
  }

  async down() {
    this.schema.dropTable('deposit_accounts')
  }
}
