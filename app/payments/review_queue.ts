import { registerReviewQueue } from '#review/queues'

/** The frozen payments' review queue: an item is a payment (its platform_order_id). */
export const FROZEN_QUEUE = registerReviewQueue({
  name: 'frozen',
  items: { table: 'payment_orders', column: 'platform_order_id' },
})
