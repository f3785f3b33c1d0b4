import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The back-office: operators (email, argon2 password, role, TOTP second
 * factor with hashed recovery codes), their server-side sessions (tagged with
 * the operator, so that "log out everywhere" deletes them), and the counters
 * of the login rate limit.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('operators', (table) => {
      table.increments('id')
      table.string('email', 191).notNullable().unique() // stored lower-case
      table.string('name', 120).notNullable()
      table.string('password', 255).notNullable() // argon2id hash
      table.enum('role', ['admin', 'operator', 'viewer']).notNullable()
      table.text('totp_secret_encrypted').nullable() // null until enrolled
      table.datetime('totp_enabled_at').nullable()
      table.bigInteger('totp_last_step').unsigned().nullable() // a used time step is refused
      table.json('recovery_code_hashes').nullable() // SHA-256 of each unused code
      table.datetime('disabled_at').nullable()
      table.datetime('last_login_at').nullable()
      table.datetime('created_at').notNullable()
      table.datetime('updated_at').notNullable()
    })

    this.schema.createTable('sessions', (table) => {
      table.string('id', 191).primary()
      table.text('data').notNullable()
      table.string('user_id', 40).nullable().index()
      table.datetime('expires_at').notNullable().index()
    })

    // @adonisjs/limiter database store (rate-limiter-flexible's MySQL layout).
    this.schema.createTable('rate_limits', (table) => {
      table.string('key', 255).notNullable().primary()
      table.integer('points', 9).notNullable().defaultTo(0)
      table.bigint('expire').unsigned()
    })
  }

  async down() {
    this.schema.dropTable('rate_limits')
    this.schema.dropTable('sessions')
    this.schema.dropTable('operators')
  }
}
