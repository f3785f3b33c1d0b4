import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Each ledger:verify run (the worker's daily `ledger.verify` and the
 * command's), as reconciliation_runs records reconcile:verify: monitoring
 * reads the last one's result and age (gateway_ledger_verify_*), so a
 * ledger that stopped balancing, or a check that stopped running, alerts.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('ledger_verify_runs', (table) => {
      table.bigIncrements('id')
      // 0: the ledger balanced (monitoring reads ok as drifts = 0).
      table.integer('drifts').unsigned().notNullable()
      table.integer('transactions').unsigned().notNullable()
      table.integer('merchants').unsigned().notNullable()
      // The first drifts, for whoever answers the alert (the command prints all of them).
      table.json('result').notNullable()
      table.string('actor', 120).notNullable()
      table.datetime('created_at', { precision: 3 }).notNullable()
    })
  }

  async down() {
    this.schema.dropTable('ledger_verify_runs')
  }
}
