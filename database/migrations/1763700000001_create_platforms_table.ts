import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A platform is a tenant of the gateway: it owns merchants and carries the
 * settings that gate deposits and settlements for all of them.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('platforms', (table) => {
      table.increments('id')
      table.string('code', 32).notNullable().unique()
      table.string('name', 120).notNullable()
      table.string('payment_page_domain', 253).nullable()
      table.boolean('deposit_enabled').notNullable().defaultTo(true) // the deposit killswitch
      // Open periods are local Asia/Bangkok times "HH:mm"; null means always open.
      table.string('deposit_open_from', 5).nullable()
      table.string('deposit_open_to', 5).nullable()
      table.string('settlement_open_from', 5).nullable()
      table.string('settlement_open_to', 5).nullable()
      table.datetime('created_at').notNullable()
      table.datetime('updated_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTable('platforms')
  }
}
