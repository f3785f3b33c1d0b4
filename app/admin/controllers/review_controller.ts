import type { HttpContext } from '@adonisjs/core/http'
import type PaymentOrder from '#payments/models/payment_order'
import { assignItems } from '#review/actions/assign_item'
import { frozenQueue, type QueueFilter } from '#admin/queries/frozen_queue'
import { reviewQueueCounts } from '#admin/queries/queue_counts'
import { slipQueue } from '#admin/queries/slip_queue'
import { slipPage } from '#admin/views/slip_page'
import { orderDecisionMessage, slipDecisionMessage } from '#admin/views/review_decisions'
import { pendingApprovals, recentDecidedApprovals } from '#admin/queries/approvals'
import { reviewSlip, SLIP_REVIEW_REASON_CODES } from '#slips/actions/review_slip'
import { rejectSlips } from '#slips/actions/reject_slips'
import { freezePayment } from '#payments/actions/freeze_payment'
import { unfreezePayment } from '#payments/actions/unfreeze_payment'
import { markPaymentPaid, type MarkPaidResult } from '#payments/actions/mark_payment_paid'
import { approveRequest, APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { rejectRequest, APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { flashBulkResults, selectedIds } from '#admin/bulk'
import { submitAction } from '#admin/operator_action'
import { decisionRights } from '#approvals/approval_rules'
import { ActionError } from '#core/validation'
import type Operator from '#operators/models/operator'
import type { Actor } from '#core/actor'

const PER_PAGE = 25

/** The fields the slip and order decision forms show an error beside; others go on top. */
const DECISION_FORM_FIELDS = ['reason_code', 'comment', 'amount_policy'] as const

/** amount_policy as the forms send it: the box ticked, or nothing. */
const amountPolicy = (ctx: HttpContext) => ctx.request.input('amount_policy') || undefined

/**
 * One of the order page's decisions, run: the order after it, and with
 * mark paid, its outcome (paid, or an approval request opened).
 */
async function decideOrder(
  what: 'freeze' | 'unfreeze' | 'mark_paid',
  input: { platform_order_id: string; reason_code: unknown; comment: unknown },
  policy: unknown,
  actor: Actor
): Promise<{ order: PaymentOrder; markPaid?: MarkPaidResult }> {
  if (what === 'freeze') return { order: await freezePayment(input, actor) }
  if (what === 'unfreeze') return { order: await unfreezePayment(input, actor) }
  const markPaid = await markPaymentPaid({ ...input, amount_policy: policy }, actor)
  return { order: markPaid.order, markPaid }
}

/** Reason codes as select options. */
const options = (codes: readonly string[]) => codes.map((code) => ({ value: code, label: code }))

/** The page and the "mine" filter of a queue's URL. */
function queueFilter(ctx: HttpContext): QueueFilter & { mine: boolean } {
  const operator = ctx.auth.user as Operator
  const mine = ctx.request.input('mine') === '1'
  return {
    page: Math.max(1, Number(ctx.request.input('page', 1)) || 1),
    perPage: PER_PAGE,
    mineOf: mine ? operator.id : null,
    mine,
  }
}

/** A decision's redirect target: back where the form was, or `fallback`. */
function backTo(ctx: HttpContext, fallback: string) {
  const to = String(ctx.request.input('back', ''))
  // Only our own back-office paths: never an open redirect.
  return /^\/admin\/[A-Za-z0-9/_\-?=&.]*$/.test(to) ? to : fallback
}

/**
 * The request's forms on an order or line page name themselves (`beside`):
 * their refusal is shown there; the approvals queue keeps it on top.
 */
function besideRequest(ctx: HttpContext, id: string) {
  return ctx.request.input('beside') === `approval-${id}` ? `approval-${id}` : undefined
}

/**
 * Review queues: frozen orders, flagged slips and approval requests, the
 * decisions taken from them, and the assignment of their items.
 */
export default class ReviewController {
  async frozen(ctx: HttpContext) {
    const filter = queueFilter(ctx)
    const { page, rows } = await frozenQueue(filter)
    return ctx.view.render('admin/review/frozen', {
      page,
      rows,
      mine: filter.mine,
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}${filter.mine ? '&mine=1' : ''}`,
      operatorId: (ctx.auth.user as Operator).id,
    })
  }

  async slips(ctx: HttpContext) {
    const filter = queueFilter(ctx)
    const { page, rows } = await slipQueue(filter)
    return ctx.view.render('admin/review/slips', {
      page,
      rows,
      mine: filter.mine,
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}${filter.mine ? '&mine=1' : ''}`,
      operatorId: (ctx.auth.user as Operator).id,
      rejectCodes: options(SLIP_REVIEW_REASON_CODES.reject),
    })
  }

  /** One slip's decision page: the image beside the order, its checks, nearby statement lines. */
  async slip(ctx: HttpContext) {
    const id = String(ctx.params.id)
    const page = await slipPage(id)
    if (!page) throw ActionError.notFound('id', `no slip ${id.slice(0, 20)}`)
    return ctx.view.render('admin/review/slip', {
      ...page,
      approveCodes: options(SLIP_REVIEW_REASON_CODES.approve),
      rejectCodes: options(SLIP_REVIEW_REASON_CODES.reject),
      decision: ctx.session.flashMessages.get('decision') ?? null,
      refusal: ctx.session.flashMessages.get('actionRefusal') ?? null,
    })
  }

  async approvals(ctx: HttpContext) {
    const filter = queueFilter(ctx)
    const { page, rows } = await pendingApprovals(filter)
    const operator = ctx.auth.user as Operator
    return ctx.view.render('admin/review/approvals', {
      page,
      rows: rows.map((row) => ({
        ...row,
        own: row.requested_by_id === operator.id,
        reviewed_slip: row.reviewed_by_id === operator.id,
        may: decisionRights(operator, {
          requestedBy: row.requested_by_id,
          reviewedBy: row.reviewed_by_id,
          approverRole: row.approver_role,
          targetType: row.target_type,
          targetId: row.target_id,
        }),
      })),
      recent: await recentDecidedApprovals(),
      mine: filter.mine,
      counts: await reviewQueueCounts(),
      query: (to: number) => `page=${to}${filter.mine ? '&mine=1' : ''}`,
      operatorId: operator.id,
      approveCodes: options(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: options(APPROVAL_REJECT_REASON_CODES),
    })
  }

  /** Approve or reject one slip (decision: approve | reject). */
  async decideSlip(ctx: HttpContext) {
    const slipId = String(ctx.params.id)
    const decision = String(ctx.request.input('decision', ''))
    ctx.session.flash('decision', decision)
    return submitAction(
      ctx,
      (actor) =>
        reviewSlip(
          {
            slip_id: slipId,
            decision,
            reason_code: ctx.request.input('reason_code'),
            comment: ctx.request.input('comment'),
            amount_policy: decision === 'approve' ? amountPolicy(ctx) : undefined,
          },
          actor
        ),
      (result) => {
        ctx.session.flash('success', slipDecisionMessage(slipId, result))
        return ctx.response.redirect(`/admin/review/slips/${slipId}`)
      },
      // Shown beside the form that was sent (approve or reject).
      { formFields: DECISION_FORM_FIELDS, action: decision === 'reject' ? 'reject' : 'approve' }
    )
  }

  /** Reject the ticked slips with one reason code and comment: one result per slip. */
  async rejectSlips(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        rejectSlips(
          {
            slip_ids: selectedIds(ctx),
            reason_code: ctx.request.input('reason_code'),
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      (results) => {
        flashBulkResults(ctx, 'Reject slips', results)
        return ctx.response.redirect().back()
      },
      // The bar's fields show no error of their own: a refusal goes on top.
      { formFields: [] }
    )
  }

  async approveRequest(ctx: HttpContext) {
    const id = String(ctx.params.id)
    return submitAction(
      ctx,
      (actor) =>
        approveRequest(
          {
            approval_request_id: id,
            reason_code: ctx.request.input('reason_code') || undefined,
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      (request) => {
        ctx.session.flash('success', `Approval request #${request.id} approved and carried out.`)
        return ctx.response.redirect(backTo(ctx, '/admin/review/approvals'))
      },
      // The cards show no error beside their fields: every refusal goes on top, or
      // beside the request on the order and line pages.
      { formFields: [], action: besideRequest(ctx, id) }
    )
  }

  async rejectRequest(ctx: HttpContext) {
    const id = String(ctx.params.id)
    return submitAction(
      ctx,
      (actor) =>
        rejectRequest(
          {
            approval_request_id: id,
            reason_code: ctx.request.input('reason_code'),
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      (request) => {
        ctx.session.flash('success', `Approval request #${request.id} rejected: nothing was run.`)
        return ctx.response.redirect(backTo(ctx, '/admin/review/approvals'))
      },
      { formFields: [], action: besideRequest(ctx, id) }
    )
  }

  /** The order page's decisions: freeze, unfreeze, mark paid. */
  async freeze(ctx: HttpContext) {
    return this.orderDecision(ctx, 'freeze')
  }

  async unfreeze(ctx: HttpContext) {
    return this.orderDecision(ctx, 'unfreeze')
  }

  async markPaid(ctx: HttpContext) {
    return this.orderDecision(ctx, 'mark_paid')
  }

  private orderDecision(ctx: HttpContext, what: 'freeze' | 'unfreeze' | 'mark_paid') {
    const platformOrderId = String(ctx.params.platformOrderId)
    const input = {
      platform_order_id: platformOrderId,
      reason_code: ctx.request.input('reason_code'),
      comment: ctx.request.input('comment'),
    }
    ctx.session.flash('decision', what)
    const page = `/admin/orders/${encodeURIComponent(platformOrderId)}`
    return submitAction(
      ctx,
      (actor) => decideOrder(what, input, amountPolicy(ctx), actor),
      ({ order, markPaid }) => {
        ctx.session.flash('success', orderDecisionMessage(what, order, markPaid))
        return ctx.response.redirect(backTo(ctx, page))
      },
      { formFields: DECISION_FORM_FIELDS, action: what }
    )
  }

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
