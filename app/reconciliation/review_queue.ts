import { registerReviewQueue } from '#review/queues'

/** The unmatched and late statement lines' review queue: an item is a line (its id). */
export const LINE_QUEUE = registerReviewQueue({
  name: 'lines',
  items: { table: 'statement_lines', column: 'id' },
})
