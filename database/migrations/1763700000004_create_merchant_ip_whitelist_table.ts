import { BaseSchema } from '@adonisjs/lucid/schema'

/** Source addresses (single IPs or CIDR blocks) a merchant may call from. */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('merchant_ip_whitelist', (table) => {
      table.increments('id')
      table
        .integer('merchant_id')
        .unsigned()
        .notNullable()
        .references('merchants.id')
        .onDelete('CASCADE')
      table.string('cidr', 49).notNullable() // IPv6 address + "/128"
      table.datetime('created_at').notNullable()
      table.unique(['merchant_id', 'cidr'])
    })
  }

  async down() {
    this.schema.dropTable('merchant_ip_whitelist')
  }
}
