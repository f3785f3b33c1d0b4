import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * API credentials. A row pairs a token (stored only as its SHA-256) with a
 * signing secret (encrypted with APP_KEY). Rotation writes a new row and gives
 * the previous ones an expires_at at the end of the grace period.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('merchant_credentials', (table) => {
      table.increments('id')
      table
        .integer('merchant_id')
        .unsigned()
        .notNullable()
        .references('merchants.id')
        .onDelete('CASCADE')
      table.specificType('token_hash', 'CHAR(64)').notNullable()
      table.string('token_hint', 8).notNullable() // last characters, to tell tokens apart in the admin panel
      table.text('secret_encrypted').notNullable()
      table.datetime('expires_at').nullable() // null: current credential
      table.datetime('created_at').notNullable()
      table.index(['merchant_id', 'expires_at'])
    })
  }

  async down() {
    this.schema.dropTable('merchant_credentials')
  }
}
