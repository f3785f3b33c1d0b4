import { registerReviewQueue } from '#review/queues'

/** The flagged slips' review queue: an item is a slip (its id). */
export const SLIP_QUEUE = registerReviewQueue({
  name: 'slips',
  items: { table: 'payment_slips', column: 'id' },
})
