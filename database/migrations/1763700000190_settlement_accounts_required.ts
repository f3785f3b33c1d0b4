import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * merchants.settlement_accounts_required: once a merchant has had a settlement
 * account registered, it settles only to a registered account, even after the
 * last one is removed (no registered account: every settlement is refused).
 * Set for every merchant that has one now; a merchant that never registered
 * one keeps settling to the account its request names (docs/decisions.md,
 * "Four eyes: a merchant's money settings and the payment-page domain").
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('merchants', (table) => {
      table.boolean('settlement_accounts_required').notNullable().defaultTo(false)
    })
    this.defer(async (db) => {
      await db.rawQuery(
        'UPDATE merchants SET settlement_accounts_required = 1 ' +
          'WHERE id IN (SELECT merchant_id FROM merchant_settlement_accounts)'
      )
    })
  }

  async down() {
    this.schema.alterTable('merchants', (table) => {
      table.dropColumn('settlement_accounts_required')
    })
  }
}
