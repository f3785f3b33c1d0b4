import { frozenCount } from '#review/frozen_queue_query'
import { slipCount } from '#review/slip_queue_query'
import { approvalCount } from '#review/approvals_query'
import { linesQueueCount } from '#reconciliation/lines_queue_query'
import { failedCallbackCount } from '#callbacks/failed_callbacks_query'
import type { ReviewQueue } from '#review/queues'

/** Open items per review queue, for the tabs every queue page shows. */
export async function reviewQueueCounts(): Promise<Record<ReviewQueue, number>> {
  const [frozen, slips, lines, approvals, callbacks] = await Promise.all([
    frozenCount(),
    slipCount(),
    linesQueueCount(),
    approvalCount(),
    failedCallbackCount(),
  ])
  return { frozen, slips, lines, approvals, callbacks }
}
