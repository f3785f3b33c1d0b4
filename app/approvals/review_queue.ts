import { registerReviewQueue } from '#review/queues'

/** The requests waiting for a second operator: an item is an approval request (its id). */
export const APPROVAL_QUEUE = registerReviewQueue({
  name: 'approvals',
  items: { table: 'approval_requests', column: 'id' },
})
