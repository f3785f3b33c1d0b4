import type { HttpContext } from '@adonisjs/core/http'
import { openReceivablesQueue } from '#admin/queries/reconciliation_page'
import { reviewQueueCounts } from '#admin/queries/queue_counts'
import { ageClass, ageLabel } from '#review/queues'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

const PER_PAGE = 25

/**
 * The receivables queue: payments credited before their bank line arrived
 * (a slip approved, a payment marked paid), the oldest first, those past the
 * window flagged. An operator finds the line in the statement-line queue and
 * attaches it to the order.
 */
export default class ReceivablesController {
  async index(ctx: HttpContext) {
    const { page, rows, windowHours } = await openReceivablesQueue({
      page: Math.max(1, Math.floor(Number(ctx.request.input('page', 1))) || 1),
      perPage: PER_PAGE,
    })
    return ctx.view.render('admin/review/receivables', {
      page,
      windowHours,
      rows: rows.map((row) => ({
        claimId: row.claimId,
        platformOrderId: row.platformOrderId,
        orderStatus: row.orderStatus,
        merchantId: row.merchantId,
        merchantName: row.merchantName,
        depositAccountId: row.depositAccountId,
        account: row.account,
        accountName: row.accountName,
        amount: formatThb(row.amount),
        claimedAt: formatGatewayDateTime(row.claimedAt),
        path: row.path,
        actor: row.actor,
        approvalRequestId: row.approvalRequestId,
        slipId: row.slipId,
        transRef: row.transRef,
        age: ageLabel(row.claimedAt),
        ageClass: row.stale ? 'age-old' : ageClass(row.claimedAt),
        stale: row.stale,
      })),
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}`,
    })
  }
}
