import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * An operator's decision on an unmatched or late statement line, written on
 * the line itself: a line is decided once (the deciding action locks the row
 * and refuses a line whose decision is set). What it went to:
 * - attached: the payment order it pays (open) or was credited for (late);
 * - credited: the merchant whose balance received it;
 * - returned: the payer's bank account the amount is sent back to.
 * The queue reads undecided lines by status, oldest first.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('statement_lines', (table) => {
      table.enum('decision', ['attached', 'credited', 'returned']).nullable()
      table.integer('decided_by').unsigned().nullable().references('operators.id')
      table.string('decided_by_actor', 120).nullable()
      table.datetime('decided_at', { precision: 3 }).nullable()
      table.string('reason_code', 64).nullable()
      table.text('comment').nullable()
      table.bigInteger('payment_order_id').unsigned().nullable().references('payment_orders.id')
      table.integer('merchant_id').unsigned().nullable().references('merchants.id')
      table.string('return_bank', 16).nullable()
      table.string('return_account_no', 32).nullable()
      table.string('return_account_name', 120).nullable()
      table.index(['decision', 'status', 'created_at'], 'statement_lines_queue_index')
    })
  }

  async down() {
    this.schema.alterTable('statement_lines', (table) => {
      table.dropIndex(['decision', 'status', 'created_at'], 'statement_lines_queue_index')
      table.dropForeign(['decided_by'])
      table.dropForeign(['payment_order_id'])
      table.dropForeign(['merchant_id'])
      table.dropColumn('decision')
      table.dropColumn('decided_by')
      table.dropColumn('decided_by_actor')
      table.dropColumn('decided_at')
      table.dropColumn('reason_code')
      table.dropColumn('comment')
      table.dropColumn('payment_order_id')
      table.dropColumn('merchant_id')
      table.dropColumn('return_bank')
      table.dropColumn('return_account_no')
      table.dropColumn('return_account_name')
    })
  }
}
