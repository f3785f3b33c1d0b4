import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Operators choose their own password through a one-time enrolment link
 * (operator:create prints it; operator:update --new-link issues another).
 * Until then the password is null and no sign-in can succeed. Only the
 * SHA-256 of the link's token is kept.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('operators', (table) => {
      table.string('password', 255).nullable().alter()
      table.string('enrolment_token_hash', 64).nullable().unique()
      table.datetime('enrolment_expires_at').nullable()
    })
  }

  async down() {
    this.schema.alterTable('operators', (table) => {
      table.dropColumn('enrolment_token_hash')
      table.dropColumn('enrolment_expires_at')
    })
  }
}
