import type { HttpContext } from '@adonisjs/core/http'
import drive from '@adonisjs/drive/services/main'
import { exportOrders } from '#admin/queries/order_search'
import { hasErrors, orderQueryString, readOrderSearch } from '#payments/order_filters'
import { KIND_LABELS, orderListPage, statusTone } from '#admin/views/order_list'
import { recordOrdersExport } from '#payments/actions/record_orders_export'
import { orderPage } from '#admin/views/order_page'
import { saveOrderView } from '#payments/actions/save_order_view'
import { deleteOrderView } from '#payments/actions/delete_order_view'
import PaymentSlip from '#slips/models/payment_slip'
import { resendCallback } from '#callbacks/actions/resend_callback'
import { ActionError } from '#core/validation'
import type Operator from '#operators/models/operator'
import { operatorActor, submitAction } from '#admin/operator_action'
import { reverseReceivable } from '#reconciliation/actions/reverse_receivable'
import { formatThb } from '#core/money'
import { codeOptions, paymentDecisions } from '#admin/views/order_decisions'
import { pendingRequestsFor } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { hasRole } from '#operators/roles'

/** The reversal form's fields: a refusal on the order itself goes on top of the page. */
const REVERSE_FORM_FIELDS = ['reason_code', 'comment'] as const

/**
 * Orders: the search of payments, withdrawals and settlements (filters,
 * sort, pages, saved views, CSV export of every match), the order page, the
 * slip images behind it, and the resend of an order's callbacks.
 */
export default class OrdersController {
  async index({ request, view, auth }: HttpContext) {
    const search = readOrderSearch(request.qs())
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    return view.render(
      'admin/orders/index',
      await orderListPage(search, pageNumber, auth.user as Operator)
    )
  }

  /**
   * Every order the filter matches as CSV, however many, streamed from one
   * snapshot (exportOrders); the audit row, written before the first byte,
   * holds exactly the number of rows sent.
   */
  async export(ctx: HttpContext) {
    const { request, response, session } = ctx
    const search = readOrderSearch(request.qs())
    if (hasErrors(search)) {
      session.flash('error', `Nothing exported: ${Object.values(search.errors).join('; ')}.`)
      return response.redirect(`/admin/orders?${orderQueryString(search)}`)
    }
    const actor = operatorActor(ctx)
    const csv = await exportOrders(search, (rows) => recordOrdersExport(search, rows, actor))
    response.header('Content-Type', 'text/csv; charset=utf-8')
    response.header(
      'Content-Disposition',
      `attachment; filename="${search.kind}-${new Date().toISOString().slice(0, 10)}.csv"`
    )
    response.header('Cache-Control', 'no-store')
    response.stream(csv)
  }

  async saveView(ctx: HttpContext) {
    const input = ctx.request.only(['name', 'query'])
    return submitAction(
      ctx,
      (actor) => saveOrderView(input, actor),
      (saved) => {
        ctx.session.flash('success', `View "${saved.name}" saved: every operator sees it.`)
        return ctx.response.redirect(`/admin/orders?${saved.query}`)
      }
    )
  }

  async deleteView(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) => deleteOrderView({ id: String(ctx.params.id) }, actor),
      (deleted) => {
        ctx.session.flash('success', `View "${deleted.name}" deleted.`)
        return ctx.response.redirect(`/admin/orders?kind=${deleted.kind}`)
      }
    )
  }

  async show({ params, view, session, auth }: HttpContext) {
    const platformOrderId = String(params.platformOrderId)
    const order = await orderPage(platformOrderId)
    if (!order) {
      throw ActionError.notFound('platform_order_id', `no order ${platformOrderId.slice(0, 40)}`)
    }
    const operator = auth.user as Operator
    // A viewer takes no decision: no Decisions card at all (the pending requests still show).
    const decides = hasRole(operator, 'operator')
    const page = `/admin/orders/${encodeURIComponent(order.platformOrderId)}`
    return view.render('admin/orders/show', {
      order,
      kindLabel: KIND_LABELS[order.kind].replace(/s$/, ''),
      tone: statusTone(order.status),
      auditHref: `/admin/audit?target=${order.orderType}:${order.platformOrderId}`,
      decisions: order.kind === 'payments' && decides ? await paymentDecisions(order) : null,
      decision: session.flashMessages.get('decision') ?? null,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      pendingRequests:
        order.kind === 'payments'
          ? await pendingRequestsFor(operator, 'payment', order.platformOrderId)
          : [],
      back: page,
      approveCodes: codeOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: codeOptions(APPROVAL_REJECT_REASON_CODES),
    })
  }

  /**
   * A slip's image, only to signed-in operators: read from the drive (which
   * serves nothing itself) and streamed with the type its bytes were
   * recognised as, never cached by the browser.
   */
  async slipImage({ params, response }: HttpContext) {
    const slip = /^\d{1,18}$/.test(String(params.id)) ? await PaymentSlip.find(params.id) : null
    if (!slip) throw ActionError.notFound('id', `no slip ${String(params.id).slice(0, 20)}`)
    const disk = drive.use()
    if (!(await disk.exists(slip.storageKey))) {
      throw ActionError.notFound('id', `the image of slip ${slip.id} is not in the drive`)
    }
    response.header('Content-Type', slip.mime)
    response.header('Content-Length', String(slip.byteSize))
    response.header(
      'Content-Disposition',
      `inline; filename="slip-${slip.id}.${slip.mime === 'image/png' ? 'png' : 'jpg'}"`
    )
    response.header('Cache-Control', 'private, no-store')
    response.header('X-Content-Type-Options', 'nosniff')
    response.stream(await disk.getStream(slip.storageKey))
  }

  /** Starts a new delivery series of the order's callbacks (operators; audited with them). */
  async resendCallback(ctx: HttpContext) {
    const platformOrderId = String(ctx.params.platformOrderId)
    return submitAction(
      ctx,
      (actor) => resendCallback({ platform_order_id: platformOrderId }, actor),
      (resent) => {
        const series = resent.map((row) => `${row.status} (series ${row.series})`).join(', ')
        const waiting = resent.some((row) => !row.queued)
        ctx.session.flash(
          'success',
          `Callback resent: ${series}.${waiting ? ' The queue was away: the next sweep sends it.' : ''}`
        )
        return ctx.response.redirect(
          `/admin/orders/${encodeURIComponent(platformOrderId)}#callbacks`
        )
      }
    )
  }

  /**
   * Takes back the credit of a payment credited before its bank line, which
   * never came (reverseReceivable): the merchant's unsettled balance is
   * debited, the order frozen for review; no callback (operators; audited).
   */
  async reverseReceivable(ctx: HttpContext) {
    const platformOrderId = String(ctx.params.platformOrderId)
    ctx.session.flash('decision', 'reverse_receivable')
    return submitAction(
      ctx,
      (actor) =>
        reverseReceivable(
          {
            platform_order_id: platformOrderId,
            reason_code: ctx.request.input('reason_code'),
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      (result) => {
        ctx.session.flash(
          'success',
          `${result.order.platformOrderId}: credit taken back, ${formatThb(result.reversed)} THB debited from the merchant (fee ${formatThb(result.fee)}); the order is ${result.order.status}. No callback is sent: tell the merchant.`
        )
        return ctx.response.redirect(
          `/admin/orders/${encodeURIComponent(platformOrderId)}#bank-receipt`
        )
      },
      { formFields: REVERSE_FORM_FIELDS, action: 'reverse_receivable' }
    )
  }
}
