import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A payout's return claims its line like any receipt (docs/reconciliation.md,
 * "Payout lines"): a credit line that brings back a bulk-file payout's amount
 * fails the payout and gives the merchant its hold back, and the claim
 * (path payout_return) ties the line to that, so that no other path can
 * take the same money again (the unique key on statement_line_id).
 */
const BEFORE = [
  'match',
  'attach',
  'late_credit',
  'merchant_credit',
  'return',
  'slip_approval',
  'mark_paid',
  'upgrade',
]

const pathEnum = (paths: string[]) => `ENUM(${paths.map((path) => `'${path}'`).join(', ')})`

export default class extends BaseSchema {
  async up() {
    this.defer(async (db) => {
      await db.rawQuery(
        `ALTER TABLE receipt_claims MODIFY path ${pathEnum([...BEFORE, 'payout_return'])} NOT NULL`
      )
    })
  }

  async down() {
    this.defer(async (db) => {
      // The lines they claimed go back to unclaimed, as they were before the path existed.
      await db.rawQuery(`DELETE FROM receipt_claims WHERE path = 'payout_return'`)
      await db.rawQuery(`ALTER TABLE receipt_claims MODIFY path ${pathEnum(BEFORE)} NOT NULL`)
    })
  }
}
