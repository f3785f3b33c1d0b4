import { registerReviewQueue } from '#review/queues'

/** The orders whose callback was given up after its attempts: an item is an order (its platform_order_id). */
export const CALLBACK_QUEUE = registerReviewQueue({
  name: 'callbacks',
  items: { table: 'callback_outbox', column: 'platform_order_id' },
})
