import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Statement matching looks for an expired order with a line's amount on the
 * line's account, however long ago it expired (the line is then late, not
 * unmatched). Expired orders pile up for ever: without this index each line
 * reads every order of its account.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_orders', (table) => {
      table.index(
        ['deposit_account_id', 'transfer_amount', 'status', 'order_at'],
        'payment_orders_late_payment_index'
      )
    })
  }

  async down() {
    this.schema.alterTable('payment_orders', (table) => {
      table.dropIndex(
        ['deposit_account_id', 'transfer_amount', 'status', 'order_at'],
        'payment_orders_late_payment_index'
      )
    })
  }
}
