import type { HttpContext } from '@adonisjs/core/http'
import { assignItems } from '#review/actions/assign_item'
import { flashBulkResults, selectedIds } from '#admin/bulk'
import { submitAction } from '#admin/operator_action'
import type Operator from '#operators/models/operator'

/**
 * Review queues: frozen orders, flagged slips and approval requests, and
 * the assignment of their items.
 */
export default class ReviewController {
  /** Take items ("assign to me"), hand them to someone, or give them back. */
  async assign(ctx: HttpContext) {
    const operator = ctx.auth.user as Operator
    const to = ctx.request.input('to', 'me')
    return submitAction(
      ctx,
      (actor) =>
        assignItems(
          {
            queue: ctx.request.input('queue'),
            item_ids: selectedIds(ctx),
            operator_id: to === 'me' ? operator.id : to === 'none' ? null : Number(to),
          },
          actor
        ),
      (results) => {
        flashBulkResults(ctx, 'Assignment', results)
        return ctx.response.redirect().back()
      }
    )
  }
}
