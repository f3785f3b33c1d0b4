import type PayoutOrder from '#payouts/models/payout_order'

/** The connector whose payouts leave in a file an operator hands to the bank. */
export const BULK_FILE = 'bulk_file'

/**
 * A bulk-file payout whose file was handed to the bank (pending): the bank
 * may carry it out at any time, and only its statement line says it did
 * (its debit) or did not (its return). Until then its hold stays: released,
 * the merchant could spend the money again before the debit arrives
 * (docs/decisions.md, "Bulk-file payouts keep their hold").
 */
export function isAtTheBank(order: Pick<PayoutOrder, 'connector' | 'status'>) {
  return order.connector === BULK_FILE && order.status === 'pending'
}

/** isAtTheBank as a query condition, for whereNot (or where) on payout_orders. */
export function atTheBankSql(query: { where(column: string, value: string): unknown }) {
  query.where('connector', BULK_FILE)
  query.where('status', 'pending')
}
