import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Merchants and their commercial settings. Money columns are BIGINT satang,
 * rates are basis points (1 bp = 0.01 %).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('merchants', (table) => {
      table.increments('id')
      table.string('merchant_id', 32).notNullable().unique()
      table.integer('platform_id').unsigned().notNullable().references('platforms.id')
      table.string('name', 120).notNullable()
      table.string('order_prefix', 3).notNullable().unique()
      table.enum('status', ['active', 'suspended']).notNullable().defaultTo('active')

      table.boolean('payment_enabled').notNullable().defaultTo(true)
      table.boolean('withdraw_enabled').notNullable().defaultTo(true)
      table.boolean('settlement_enabled').notNullable().defaultTo(true)

      table.string('deposit_group', 64).nullable() // null: partner configuration missing for deposits
      table.string('payout_route', 64).nullable() // null: partner configuration missing for payouts

      table.integer('payment_fee_rate_bps').notNullable().defaultTo(0)
      table.bigInteger('withdraw_fee_flat').notNullable().defaultTo(0)
      table.integer('withdraw_fee_rate_bps').notNullable().defaultTo(0)
      table.bigInteger('settlement_fee_flat').notNullable().defaultTo(0)

      table.bigInteger('withdraw_min').notNullable().defaultTo(2000)
      table.bigInteger('withdraw_max').nullable()
      table.boolean('withdraw_duplicate_check').notNullable().defaultTo(false)
      table.bigInteger('settlement_min').notNullable().defaultTo(10000)
      table.bigInteger('settlement_max').notNullable().defaultTo(50000000)

      table.integer('order_ttl_seconds').notNullable().defaultTo(900)
      table.integer('slip_upload_wait_seconds').notNullable().defaultTo(0)

      // Set by the payout flow when a late success debits a released hold below zero.
      table.boolean('negative_balance_flag').notNullable().defaultTo(false)

      table.datetime('created_at').notNullable()
      table.datetime('updated_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTable('merchants')
  }
}
