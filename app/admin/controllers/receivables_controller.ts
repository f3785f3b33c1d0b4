import type { HttpContext } from '@adonisjs/core/http'
import { receivablesQueuePage } from '#admin/views/receivables'
import { reviewQueueCounts } from '#admin/queries/queue_counts'

const PER_PAGE = 25

/**
 * The receivables queue: payments credited before their bank line arrived
 * (a slip approved, a payment marked paid), the oldest first, those past the
 * window flagged. An operator finds the line in the statement-line queue and
 * attaches it to the order.
 */
export default class ReceivablesController {
  async index(ctx: HttpContext) {
    const pageNumber = Math.max(1, Math.floor(Number(ctx.request.input('page', 1))) || 1)
    const queue = await receivablesQueuePage(pageNumber, PER_PAGE)
    return ctx.view.render('admin/review/receivables', {
      ...queue,
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}`,
    })
  }
}
