import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Secret rotation as jobs:
 * - scheduled_credential_rotations: a rotation an operator asked for at a
 *   given time, carried out by the worker. The new values are kept encrypted
 *   (APP_KEY) until an operator reveals them once, then cleared.
 * - merchant_credentials.revoked_at: when the worker revoked a credential
 *   whose grace period had ended (or the rotation did, with grace 0).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('scheduled_credential_rotations', (table) => {
      table.increments('id')
      table
        .integer('merchant_id')
        .unsigned()
        .notNullable()
        .references('merchants.id')
        .onDelete('CASCADE')
      table.boolean('rotate_token').notNullable()
      table.boolean('rotate_secret').notNullable()
      table.integer('grace_seconds').unsigned().notNullable()
      table.datetime('run_at').notNullable()
      table
        .enum('status', ['scheduled', 'done', 'cancelled', 'failed'])
        .notNullable()
        .defaultTo('scheduled')
      table.string('requested_by', 120).notNullable() // the actor, as in audit_logs.actor
      table.integer('requested_by_operator_id').unsigned().nullable()
      table.text('comment').nullable()
      // When it ran, was cancelled or failed.
      table.datetime('done_at').nullable()
      table.string('failure', 255).nullable()
      table.integer('credential_id').unsigned().nullable() // the credential it issued
      table.datetime('previous_valid_until').nullable()
      table.text('new_token_encrypted').nullable()
      table.text('new_secret_encrypted').nullable()
      table.datetime('revealed_at').nullable()
      table.string('revealed_by', 120).nullable()
      table.datetime('created_at').notNullable()
      table.datetime('updated_at').notNullable()
      table.index(['status', 'run_at'])
      table.index(['merchant_id', 'id'])
    })

    this.schema.alterTable('merchant_credentials', (table) => {
      table.datetime('revoked_at').nullable().after('expires_at')
      table.index(['revoked_at', 'expires_at']) // the revocation sweep
    })
  }

  async down() {
    this.schema.alterTable('merchant_credentials', (table) => {
      table.dropIndex(['revoked_at', 'expires_at'])
      table.dropColumn('revoked_at')
    })
    this.schema.dropTable('scheduled_credential_rotations')
  }
}
