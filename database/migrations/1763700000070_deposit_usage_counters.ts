import { BaseSchema } from '@adonisjs/lucid/schema'
import { DateTime } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'

/**
 * Payment create must cost the same whatever the number of orders of the day
 * (docs/decisions.md, "Limit counters and slot rows"):
 *
 * - deposit_usage_counters: orders and THB (sum of transfer_amount) created on
 *   an account per Bangkok clock hour and per Bangkok day, kept in the
 *   transaction that writes the order; the limits are checked against them,
 *   never against a sum over payment_orders. period_start is the UTC instant
 *   the Bangkok hour or day begins.
 * - deposit_slots: one row per account and transfer_amount ever handed out,
 *   held or free. A create takes the smallest free row of its range through
 *   the (account, held, amount) index instead of reading the held amounts.
 *   payment_orders.slot_amount and its unique key stay: they say which order
 *   holds the amount, and still make a shared transfer_amount impossible.
 *
 * Both are filled from the orders here, so that a running gateway keeps its
 * limits and its held amounts (`deposit-usage:verify --fix` repairs what was
 * created between this migration and the new code taking over).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('deposit_usage_counters', (table) => {
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.enum('period', ['hour', 'day']).notNullable()
      table.datetime('period_start', { precision: 3 }).notNullable()
      table.integer('order_count').unsigned().notNullable().defaultTo(0)
      table.bigInteger('amount').notNullable().defaultTo(0)
      table.primary(['deposit_account_id', 'period', 'period_start'])
    })
    this.schema.createTable('deposit_slots', (table) => {
      table.integer('deposit_account_id').unsigned().notNullable().references('deposit_accounts.id')
      table.bigInteger('slot_amount').notNullable()
      table.boolean('held').notNullable()
      table.primary(['deposit_account_id', 'slot_amount'])
      table.index(['deposit_account_id', 'held', 'slot_amount'], 'deposit_slots_free_index')
    })

    this.defer(async (db) => {
      const local = DateTime.utc().setZone(GATEWAY_ZONE)
      const dayStart = local.startOf('day').toUTC().toJSDate()
      const dayEnd = local.startOf('day').plus({ days: 1 }).toUTC().toJSDate()
      // Bangkok is UTC+7 all year: its clock hours begin on UTC hours.
      await db.rawQuery(
        `INSERT INTO deposit_usage_counters (deposit_account_id, period, period_start, order_count, amount)
         SELECT deposit_account_id, 'hour', DATE_FORMAT(created_at, '%Y-%m-%d %H:00:00'),
                COUNT(*), SUM(transfer_amount)
           FROM payment_orders
          WHERE created_at >= ? AND created_at < ?
          GROUP BY deposit_account_id, DATE_FORMAT(created_at, '%Y-%m-%d %H:00:00')`,
        [dayStart, dayEnd]
      )
      await db.rawQuery(
        `INSERT INTO deposit_usage_counters (deposit_account_id, period, period_start, order_count, amount)
         SELECT deposit_account_id, 'day', ?, COUNT(*), SUM(transfer_amount)
           FROM payment_orders
          WHERE created_at >= ? AND created_at < ?
          GROUP BY deposit_account_id`,
        [dayStart, dayStart, dayEnd]
      )
      await db.rawQuery(
        `INSERT INTO deposit_slots (deposit_account_id, slot_amount, held)
         SELECT deposit_account_id, slot_amount, 1 FROM payment_orders WHERE slot_amount IS NOT NULL`
      )
    })
  }

  async down() {
    this.schema.dropTable('deposit_slots')
    this.schema.dropTable('deposit_usage_counters')
  }
}
