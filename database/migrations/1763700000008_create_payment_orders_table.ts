import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    /**
     * merchant_order_id reservations, per merchant and order family. A row
     * older than 7 days may be taken over by a new order; the primary key makes
     * two identical creates at once produce one order and one 409.
     */
    this.schema.createTable('merchant_order_ids', (table) => {
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.enum('scope', ['payment', 'settlement']).notNullable()
      table.string('merchant_order_id', 40).notNullable()
      table.datetime('reserved_at', { precision: 3 }).notNullable()
      table.primary(['merchant_id', 'scope', 'merchant_order_id'])
    })

    this.schema.createTable('payment_orders', (table) => {
      table.bigIncrements('id')
      table.specificType('platform_order_id', 'CHAR(24)').notNullable().unique()
      table.specificType('uuid', 'CHAR(36)').notNullable().unique()
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.string('merchant_order_id', 40).notNullable()
      table.enum('payment_type', ['QR', 'TRANSFER', 'FLEX']).notNullable()
      table.enum('channel', ['qr', 'transfer', 'external']).notNullable()
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.bigInteger('amount').notNullable()
      table.bigInteger('transfer_amount').notNullable()
      // transfer_amount while the slot is held; NULL once released. The unique
      // key makes a shared transfer_amount on one account impossible.
      table.bigInteger('slot_amount').nullable()
      table.bigInteger('fee').nullable()
      table.text('qrcode').nullable()
      table.string('payment_reference', 20).nullable() // ref1 of a bill-payment QR
      table.string('external_reference', 64).nullable()
      table.string('external_url', 2048).nullable()
      table.string('customer_bank', 8).notNullable()
      table.string('customer_account_name', 120).notNullable()
      table.string('customer_account_no', 15).notNullable()
      table.string('notify_url', 2048).nullable()
      table
        .enum('status', ['open', 'unsettled_paid', 'settled_paid', 'error', 'freeze'])
        .notNullable()
      table.string('status_before_freeze', 20).nullable()
      table.boolean('awaiting_review').notNullable().defaultTo(false)
      table.string('error_reason', 64).nullable()
      table.datetime('order_at', { precision: 3 }).notNullable()
      table.datetime('expire_at', { precision: 3 }).notNullable()
      table.datetime('paid_at', { precision: 3 }).nullable()
      table.datetime('settled_at', { precision: 3 }).nullable()
      table.datetime('closed_at', { precision: 3 }).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.datetime('updated_at', { precision: 3 }).notNullable()
      table.unique(['deposit_account_id', 'slot_amount'])
      table.index(['deposit_account_id', 'created_at'])
      table.index(['merchant_id', 'merchant_order_id'])
      table.index(['status', 'expire_at'])
      table.index(['payment_reference'])
    })

    /**
     * Transactional outbox of merchant callbacks: written in the same database
     * transaction as the state change it reports, delivered by the worker. The
     * unique key allows one callback per order and final state.
     */
    this.schema.createTable('callback_outbox', (table) => {
      table.bigIncrements('id')
      table.integer('merchant_id').unsigned().notNullable().references('merchants.id')
      table.enum('order_type', ['payment', 'withdraw', 'settlement']).notNullable()
      table.bigInteger('order_id').unsigned().notNullable()
      table.specificType('platform_order_id', 'CHAR(24)').notNullable()
      table.string('status', 16).notNullable()
      table.string('notify_url', 2048).notNullable()
      table.text('body').notNullable() // built once; signed at delivery with the current secret
      table.enum('state', ['pending', 'delivered', 'failed']).notNullable().defaultTo('pending')
      table.integer('attempts').unsigned().notNullable().defaultTo(0)
      table.datetime('delivered_at', { precision: 3 }).nullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
      table.unique(['order_type', 'order_id', 'status'])
      table.index(['state', 'created_at'])
    })
  }

  async down() {
    this.schema.dropTable('callback_outbox')
    this.schema.dropTable('payment_orders')
    this.schema.dropTable('merchant_order_ids')
  }
}
