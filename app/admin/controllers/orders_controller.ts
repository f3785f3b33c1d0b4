import type { HttpContext } from '@adonisjs/core/http'
import { Readable, pipeline } from 'node:stream'
import { stringify } from 'csv-stringify'
import db from '@adonisjs/lucid/services/db'
import drive from '@adonisjs/drive/services/main'
import logger from '@adonisjs/core/services/logger'
import {
  BANK_CHOICES,
  EXPORT_COLUMNS,
  countOrders,
  exportRecord,
  orderRow,
  orderStream,
  searchOrders,
  statusChoices,
} from '#admin/queries/order_search'
import {
  ORDER_KINDS,
  ORDER_TYPE_OF_KIND,
  channelChoices,
  hasErrors,
  orderQueryString,
  readOrderSearch,
  type OrderKind,
  type OrderSort,
} from '#payments/order_filters'
import { orderPage, type OrderPage } from '#admin/views/order_page'
import SavedOrderView from '#payments/models/saved_order_view'
import { saveOrderView } from '#payments/actions/save_order_view'
import { deleteOrderView } from '#payments/actions/delete_order_view'
import PaymentSlip from '#slips/models/payment_slip'
import { resendCallback } from '#callbacks/actions/resend_callback'
import { recordAudit } from '#core/audit'
import { ActionError } from '#core/validation'
import type Operator from '#operators/models/operator'
import { operatorActor, submitAction } from '#admin/operator_action'
import PaymentOrder from '#payments/models/payment_order'
import ApprovalRequest, { pendingKeyOf } from '#approvals/models/approval_request'
import { FREEZE_REASON_CODES } from '#payments/actions/freeze_payment'
import { UNFREEZE_REASON_CODES } from '#payments/actions/unfreeze_payment'
import { MARK_PAID_REASON_CODES } from '#payments/actions/mark_payment_paid'
import {
  reverseReceivable,
  REVERSE_CREDIT_REASON_CODES,
} from '#reconciliation/actions/reverse_receivable'
import { formatThb } from '#core/money'
import { operatorActionsFor } from '#payments/payment_state'
import { underlyingStatus } from '#payments/payment_rules'
import { pendingRequestsFor } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { hasRole } from '#operators/roles'
import { inTransaction } from '#core/transaction'

const PER_PAGE = 25

const KIND_LABELS: Record<OrderKind, string> = {
  payments: 'Payments',
  withdrawals: 'Withdrawals',
  settlements: 'Settlements',
}

/** A status as a badge colour: paid or successful, failed, on hold, in progress. */
function statusTone(status: string) {
  if (['unsettled_paid', 'settled_paid', 'success'].includes(status)) return 'ok'
  if (['error', 'failed', 'cancelled', 'rejected'].includes(status)) return 'bad'
  if (status === 'freeze') return 'warn'
  return ''
}

const codeOptions = (codes: readonly string[]) =>
  codes.map((code) => ({ value: code, label: code }))

/**
 * Which decisions the order page offers on a payment now (the actions check
 * again): what the state table allows (operatorActionsFor: freeze, unfreeze,
 * mark paid unless a request for it is pending), and taking back the credit
 * of a paid one whose claim is an open receivable (its bank line never came).
 */
async function paymentDecisions(order: OrderPage) {
  const platformOrderId = order.platformOrderId
  const payment = await PaymentOrder.findByOrFail('platform_order_id', platformOrderId)
  const allowed = operatorActionsFor(payment)
  const underlying = underlyingStatus(payment)
  const pending = await ApprovalRequest.query()
    .where('pending_key', pendingKeyOf('mark_paid', { type: 'payment', id: platformOrderId }))
    .first()
  const claim = order.receipt?.claim ?? null
  const paid = underlying === 'unsettled_paid' || underlying === 'settled_paid'
  return {
    canFreeze: allowed.freeze,
    canUnfreeze: allowed.unfreeze,
    canMarkPaid: allowed.markPaid && !pending,
    canReverse: Boolean(claim?.open) && paid,
    /** Where a reversal takes the credit from, and whether the order is frozen by it. */
    reverseFrom: underlying === 'settled_paid' ? 'available' : 'unsettled',
    reverseCredit: claim ? { credited: claim.credited, fee: claim.fee } : null,
    frozenFrom: payment.status === 'freeze' ? payment.statusBeforeFreeze : null,
    pending: pending ? { id: pending.id, requested_by: pending.requestedByActor } : null,
    freezeCodes: codeOptions(FREEZE_REASON_CODES),
    unfreezeCodes: codeOptions(UNFREEZE_REASON_CODES),
    markPaidCodes: codeOptions(MARK_PAID_REASON_CODES),
    reverseCodes: codeOptions(REVERSE_CREDIT_REASON_CODES),
  }
}

/** The reversal form's fields: a refusal on the order itself goes on top of the page. */
const REVERSE_FORM_FIELDS = ['reason_code', 'comment'] as const

/**
 * Orders: the search of payments, withdrawals and settlements (filters,
 * sort, pages, saved views, CSV export of every match), the order page, the
 * slip images behind it, and the resend of an order's callbacks.
 */
export default class OrdersController {
  async index(ctx: HttpContext) {
    const { request, view, auth } = ctx
    const search = readOrderSearch(request.qs())
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const page = hasErrors(search) ? null : await searchOrders(search, pageNumber, PER_PAGE)
    const operator = auth.user as Operator
    const views = await SavedOrderView.query()
      .where('kind', search.kind)
      .preload('creator')
      .orderBy('name')

    const sortMark = (column: OrderSort) =>
      search.sort === column ? (search.dir === 'asc' ? ' ↑' : ' ↓') : ''
    return view.render('admin/orders/index', {
      search,
      kind: search.kind,
      filters: search.filters,
      errors: search.errors,
      kinds: ORDER_KINDS.map((kind) => ({
        kind,
        label: KIND_LABELS[kind],
        href: `/admin/orders?kind=${kind}`,
        active: kind === search.kind,
      })),
      statusChoices: statusChoices(search.kind),
      channelChoices: channelChoices(search.kind),
      bankChoices: BANK_CHOICES,
      rows: (page?.all() ?? []).map((row) => {
        const shown = orderRow(search.kind, row)
        return { ...shown, tone: statusTone(shown.status) }
      }),
      page,
      query: (to: number) => orderQueryString(search, { page: String(to) }),
      /** A column heading's link: the other direction when the list is already sorted by it. */
      sortQuery: (column: OrderSort) =>
        orderQueryString({
          ...search,
          sort: column,
          dir: search.sort === column && search.dir === 'desc' ? 'asc' : 'desc',
        }),
      sortMark,
      currentQuery: orderQueryString(search),
      exportHref: `/admin/orders.csv?${orderQueryString(search)}`,
      views: views.map((saved) => ({
        id: saved.id,
        name: saved.name,
        href: `/admin/orders?${saved.query}`,
        active: saved.query === orderQueryString(search),
        created_by: saved.creator?.email ?? `operator ${saved.createdBy}`,
        own: saved.createdBy === operator.id,
      })),
    })
  }

  /**
   * Every order the filter matches as CSV, however many, streamed from one
   * database cursor (constant memory) in the list's order. The count and the
   * rows come from one snapshot (a repeatable-read transaction), so the audit
   * row, written before the first byte, holds exactly the number of rows sent.
   */
  async export(ctx: HttpContext) {
    const { request, response, session } = ctx
    const search = readOrderSearch(request.qs())
    if (hasErrors(search)) {
      session.flash('error', `Nothing exported: ${Object.values(search.errors).join('; ')}.`)
      return response.redirect(`/admin/orders?${orderQueryString(search)}`)
    }
    const snapshot = await db.transaction({ isolationLevel: 'repeatable read' })
    let source: Readable
    try {
      const rows = await countOrders(search, snapshot)
      await inTransaction((trx) =>
        recordAudit(trx, operatorActor(ctx), {
          action: 'orders.export',
          target: { type: ORDER_TYPE_OF_KIND[search.kind], id: 'csv' },
          details: {
            kind: search.kind,
            filters: search.filters,
            sort: search.sort,
            dir: search.dir,
            rows,
          },
        })
      )
      source = orderStream(search, snapshot)
    } catch (error) {
      await snapshot.rollback()
      throw error
    }

    const kind = search.kind
    const records = Readable.from(
      (async function* () {
        for await (const row of source) yield exportRecord(kind, row)
      })()
    )
    const csv = stringify({ header: true, columns: EXPORT_COLUMNS[kind] })
    // A client that goes away destroys the CSV stream: the cursor is closed and the snapshot ends.
    pipeline(records, csv, (error) => {
      if (error) logger.info({ err: error }, 'orders export ended early')
      snapshot
        .rollback()
        .catch((rollbackError) => logger.warn({ err: rollbackError }, 'export snapshot'))
    })
    response.header('Content-Type', 'text/csv; charset=utf-8')
    response.header(
      'Content-Disposition',
      `attachment; filename="${kind}-${new Date().toISOString().slice(0, 10)}.csv"`
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
