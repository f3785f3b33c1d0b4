import { frozenCount } from '#review/frozen_queue_query'
import { slipCount } from '#review/slip_queue_query'
import { approvalCount } from '#review/approvals_query'
import { linesQueueCount } from '#reconciliation/lines_queue_query'
import { failedCallbackCount } from '#callbacks/failed_callbacks_query'
import { staleReceivableCount } from '#reconciliation/reconciliation_page_query'
import type { ReviewQueue } from '#review/queues'

/**
 * Open items per review queue, for the tabs every queue page shows; for
 * receivables (payments credited before their bank line), those past the
 * window: the ones waiting on an operator.
 */
export async function reviewQueueCounts(): Promise<Record<ReviewQueue | 'receivables', number>> {
  const [frozen, slips, lines, approvals, callbacks, receivables] = await Promise.all([
    frozenCount(),
    slipCount(),
    linesQueueCount(),
    approvalCount(),
    failedCallbackCount(),
    staleReceivableCount(),
  ])
  return { frozen, slips, lines, approvals, callbacks, receivables }
}
