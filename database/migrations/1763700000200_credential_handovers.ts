import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * credential_handovers: the new token and/or secret of an approved rotation
 * (now or scheduled), kept encrypted (APP_KEY) for exactly one view by the
 * operator who asked for it (operator_id; null: asked from the server's
 * shell, shown there). The view clears the ciphertexts and records when and
 * by whom, in one conditional update: a second view, or anyone else's, is
 * refused. The plaintext is never written anywhere else (not in the approval
 * request, the audit log or a notification).
 *
 * A scheduled rotation's values waiting to be revealed move here, for the
 * operator who scheduled it; the rotation's own columns are cleared.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('credential_handovers', (table) => {
      table.increments('id')
      table
        .integer('merchant_id')
        .unsigned()
        .notNullable()
        .references('merchants.id')
        .onDelete('CASCADE')
      table.integer('credential_id').unsigned().notNullable() // the credential it issued
      table.integer('operator_id').unsigned().nullable() // who may view it; null: the shell
      table.string('requested_by', 120).notNullable() // the actor, as in audit_logs.actor
      table.integer('approval_request_id').unsigned().nullable()
      table.integer('rotation_id').unsigned().nullable()
      table.text('token_encrypted').nullable()
      table.text('secret_encrypted').nullable()
      table.boolean('token_rotated').notNullable()
      table.boolean('secret_rotated').notNullable()
      table.datetime('previous_valid_until').nullable()
      table.datetime('viewed_at').nullable()
      table.string('viewed_by', 120).nullable()
      table.datetime('created_at').notNullable()
      table.index(['merchant_id', 'viewed_at'])
    })

    this.defer(async (db) => {
      const waiting = await db
        .from('scheduled_credential_rotations')
        .where('status', 'done')
        .whereNotNull('credential_id')
        .where((query) =>
          query.whereNotNull('new_token_encrypted').orWhereNotNull('new_secret_encrypted')
        )
      for (const rotation of waiting) {
        await db.table('credential_handovers').insert({
          merchant_id: rotation.merchant_id,
          credential_id: rotation.credential_id,
          operator_id: rotation.requested_by_operator_id,
          requested_by: rotation.requested_by,
          rotation_id: rotation.id,
          token_encrypted: rotation.new_token_encrypted,
          secret_encrypted: rotation.new_secret_encrypted,
          token_rotated: rotation.rotate_token,
          secret_rotated: rotation.rotate_secret,
          previous_valid_until: rotation.previous_valid_until,
          created_at: rotation.done_at ?? new Date(),
        })
        await db
          .from('scheduled_credential_rotations')
          .where('id', rotation.id)
          .update({ new_token_encrypted: null, new_secret_encrypted: null })
      }
    })
  }

  async down() {
    this.schema.dropTable('credential_handovers')
  }
}
