import { frozenCount } from '#admin/queries/frozen_queue'
import { slipCount } from '#admin/queries/slip_queue'
import { approvalCount } from '#admin/queries/approvals'
import { linesQueueCount } from '#admin/queries/lines_queue'
import { failedCallbackCount } from '#admin/queries/failed_callbacks'
import { staleReceivableCount } from '#reconciliation/receivable_window'
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
