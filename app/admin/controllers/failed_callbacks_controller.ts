import type { HttpContext } from '@adonisjs/core/http'
import { failedCallbacks } from '#admin/queries/failed_callbacks'
import { reviewQueueCounts } from '#admin/queries/queue_counts'
import { RESEND_REASON_CODES } from '#callbacks/actions/resend_callback'
import { resendCallbacks } from '#callbacks/actions/resend_callbacks'
import { flashBulkResults, selectedIds } from '#admin/bulk'
import { submitAction } from '#admin/operator_action'
import type Operator from '#operators/models/operator'

const PER_PAGE = 25

/**
 * The failed-callbacks queue: callbacks given up after their five attempts,
 * resent in bulk (one result per order) once the merchant's endpoint works.
 */
export default class FailedCallbacksController {
  async index(ctx: HttpContext) {
    const operator = ctx.auth.user as Operator
    const mine = ctx.request.input('mine') === '1'
    const { page, rows } = await failedCallbacks({
      page: Math.max(1, Number(ctx.request.input('page', 1)) || 1),
      perPage: PER_PAGE,
      mineOf: mine ? operator.id : null,
    })
    return ctx.view.render('admin/review/callbacks', {
      page,
      rows,
      mine,
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}${mine ? '&mine=1' : ''}`,
      reasonCodes: RESEND_REASON_CODES.map((code) => ({ value: code, label: code })),
    })
  }

  /** Resends the ticked orders' callbacks: a new series each, audited with the reason. */
  async resend(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        resendCallbacks(
          {
            platform_order_ids: selectedIds(ctx),
            reason_code: ctx.request.input('reason_code'),
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      (results) => {
        flashBulkResults(ctx, 'Resend callbacks', results)
        return ctx.response.redirect().back()
      },
      // The bar's fields show no error of their own: every refusal goes on top.
      { formFields: [] }
    )
  }
}
