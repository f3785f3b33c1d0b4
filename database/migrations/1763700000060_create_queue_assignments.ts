import { BaseSchema } from '@adonisjs/lucid/schema'
import { binaryCollation } from '#database/collation'

/**
 * Review queues: who is working on an item ("my items"). One row per item
 * at most (unique queue + item_id), so two operators taking the same item at
 * once cannot both have it. A decision removes the row; unassigning too.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('queue_assignments', (table) => {
      table.bigIncrements('id')
      table.string('queue', 32).notNullable()
      table.string('item_id', 64).notNullable()
      table.integer('operator_id').unsigned().notNullable().references('operators.id')
      table.datetime('assigned_at', { precision: 3 }).notNullable()
      table.unique(['queue', 'item_id'])
      table.index(['operator_id', 'queue'])
    })
    this.defer(async (db) => {
      const collation = await binaryCollation(db)
      await db.rawQuery(
        `ALTER TABLE queue_assignments MODIFY item_id VARCHAR(64) COLLATE ${collation} NOT NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('queue_assignments')
  }
}
