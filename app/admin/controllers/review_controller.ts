import type { HttpContext } from '@adonisjs/core/http'
import { DateTime } from 'luxon'
import PaymentSlip from '#slips/models/payment_slip'
import PaymentOrder from '#payments/models/payment_order'
import ApprovalRequest, { pendingKeyOf } from '#approvals/models/approval_request'
import { assignItems } from '#review/actions/assign_item'
import { assignmentsOf } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import { frozenQueue, type QueueFilter } from '#admin/queries/frozen_queue'
import { reviewQueueCounts } from '#admin/queries/queue_counts'
import { linesNear, slipQueue } from '#admin/queries/slip_queue'
import { pendingApprovals, recentDecidedApprovals } from '#admin/queries/approvals'
import { reviewSlip, SLIP_REVIEW_REASON_CODES } from '#slips/actions/review_slip'
import { slipDetails } from '#slips/slip_details'
import { statementLinesCarrying } from '#slips/forensics'
import { underlyingStatus } from '#payments/payment_rules'
import { slipEvidence } from '#reconciliation/payment_receipts'
import {
  orderClaimView,
  previewPaymentReceipt,
  previewReceived,
  receivedVersusTransfer,
  slipTransferLine,
  transferClaimView,
} from '#admin/views/receipts'
import { freezePayment } from '#payments/actions/freeze_payment'
import { unfreezePayment } from '#payments/actions/unfreeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { approveRequest, APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { rejectRequest, APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { flashBulkResults, runBulk, selectedIds } from '#admin/bulk'
import { submitAction } from '#admin/operator_action'
import { decisionRights } from '#approvals/approval_rules'
import { ActionError } from '#core/validation'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'
import Operator from '#operators/models/operator'

const PER_PAGE = 25

/** The fields the slip and order decision forms show an error beside; others go on top. */
const DECISION_FORM_FIELDS = ['reason_code', 'comment', 'amount_policy'] as const

/** amount_policy as the forms send it: the box ticked, or nothing. */
const amountPolicy = (ctx: HttpContext) => ctx.request.input('amount_policy') || undefined

/**
 * The slip page's bank receipt: the statement line that is the slip's
 * transfer (trans_ref on the order's deposit account) and who claimed it,
 * the claim that credited the order, what approving would take now (a
 * line, or a receivable its line will clear) and the amount received
 * against transfer_amount, with the credit it gives. `decidable`: the slip
 * can still be approved (undecided, its order open, no request pending).
 */
async function slipReceipt(slip: PaymentSlip, order: PaymentOrder, decidable: boolean) {
  const transfer = await slipTransferLine(order.depositAccountId, slip.transRef)
  const transferClaim = await transferClaimView(slip.transRef)
  const orderClaim = await orderClaimView(order.id)
  const evidence = slipEvidence(slip)
  const preview = decidable ? await previewPaymentReceipt(order, evidence) : null
  const facts = ((slip.verification ?? {}) as Record<string, any>).facts
  let received: number | null = null
  let receivedFrom: string | null = null
  if (orderClaim) {
    received = orderClaim.received_satang
    receivedFrom = orderClaim.line
      ? `statement line #${orderClaim.line.id}, claimed for this order`
      : 'expected by the receivable this order was credited from; its line has not arrived'
  } else if (preview?.kind === 'line') {
    received = preview.received
    receivedFrom = `statement line #${preview.line.id}`
  } else if (transfer) {
    received = transfer.line.amount_satang
    receivedFrom = `statement line #${transfer.line.id}`
  } else if (evidence.facts) {
    received = evidence.facts.amount
    receivedFrom = `the slip’s source (${String(facts?.source ?? 'a verifier')}); no line yet`
  }
  const fee = order.merchant.paymentFeeRateBps
  const claimed = transfer?.claim ?? transferClaim
  // What approving credits: the amount the decision's receipt brings (the action's own rule).
  const policy = receivedVersusTransfer(order, previewReceived(preview), fee)
  return {
    trans_ref: slip.transRef,
    transfer: transfer?.line ?? null,
    claimed,
    order_claim: orderClaim && orderClaim.id !== claimed?.id ? orderClaim : null,
    preview,
    amounts: receivedVersusTransfer(order, received, fee),
    received_from: receivedFrom,
    policy: policy?.differs ? policy : null,
  }
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
    const slip = /^\d{1,18}$/.test(id) ? await PaymentSlip.find(id) : null
    if (!slip) throw ActionError.notFound('id', `no slip ${id.slice(0, 20)}`)
    const order = await PaymentOrder.query()
      .where('id', slip.paymentOrderId)
      .preload('merchant')
      .preload('depositAccount')
      .firstOrFail()
    const live = await statementLinesCarrying([slip.transRef])
    const details = slipDetails(slip, {
      statementLines: slip.transRef ? live.get(slip.transRef) : undefined,
    })
    const facts = ((slip.verification ?? {}) as Record<string, any>).facts
    const transferredAt =
      typeof facts?.transferred_at === 'string' ? DateTime.fromISO(facts.transferred_at) : null
    const around = transferredAt?.isValid ? transferredAt.toJSDate() : slip.createdAt.toJSDate()
    const lines = await linesNear(order.depositAccountId, around, order.transferAmount)
    const pending = await ApprovalRequest.query()
      .where(
        'pending_key',
        pendingKeyOf('mark_paid', { type: 'payment', id: order.platformOrderId })
      )
      .first()
    const holder = (await assignmentsOf('slips', [slip.id])).get(String(slip.id)) ?? null
    const reviewer = slip.reviewedBy ? await Operator.find(slip.reviewedBy) : null
    const decidable = !slip.reviewDecision && !pending && underlyingStatus(order) === 'open'
    return ctx.view.render('admin/review/slip', {
      slip: details,
      receipt: await slipReceipt(slip, order, decidable),
      order: {
        platform_order_id: order.platformOrderId,
        merchant_order_id: order.merchantOrderId,
        merchant: `${order.merchant.merchantId} · ${order.merchant.name}`,
        status: order.status,
        awaiting_review: order.awaitingReview,
        amount: formatThb(order.amount),
        transfer_amount: formatThb(order.transferAmount),
        customer: `${order.customerBank} ${order.customerAccountNo} · ${order.customerAccountName}`,
        account: `${order.depositAccount.bank} ${order.depositAccount.accountNo} · ${order.depositAccount.accountName}`,
        created: formatGatewayDateTime(order.orderAt),
        expires: formatGatewayDateTime(order.expireAt),
      },
      linesAround: formatGatewayDateTime(around),
      linesBasis: transferredAt?.isValid ? 'the slip’s transfer time' : 'the upload time',
      lines,
      decided: slip.reviewDecision
        ? {
            decision: slip.reviewDecision,
            by: reviewer?.email ?? (slip.reviewedBy ? `operator ${slip.reviewedBy}` : 'system'),
            at: formatGatewayDateTime(slip.reviewedAt),
            reason_code: slip.reviewReasonCode,
            comment: slip.reviewComment,
          }
        : null,
      pending: pending ? { id: pending.id, requested_by: pending.requestedByActor } : null,
      holder: holder?.operatorEmail ?? null,
      age: ageLabel(slip.createdAt),
      ageClass: ageClass(slip.createdAt),
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
        if (result.decision === 'reject') {
          ctx.session.flash(
            'success',
            `Slip ${slipId} rejected; the order is ${result.order.status}${result.order.awaitingReview ? ' and still awaits review' : ''}.`
          )
        } else if (result.outcome === 'approval_requested') {
          ctx.session.flash(
            'success',
            `Above the platform’s four-eyes threshold: approval request #${result.request.id} opened; a second operator must approve it before the payment is marked paid.`
          )
        } else {
          ctx.session.flash(
            'success',
            `Slip ${slipId} approved: payment ${result.order.platformOrderId} is ${result.order.status}.`
          )
        }
        return ctx.response.redirect(`/admin/review/slips/${slipId}`)
      },
      // Shown beside the form that was sent (approve or reject).
      { formFields: DECISION_FORM_FIELDS, action: decision === 'reject' ? 'reject' : 'approve' }
    )
  }

  /** Reject the ticked slips with one reason code and comment: one result per slip. */
  async rejectSlips(ctx: HttpContext) {
    const reasonCode = ctx.request.input('reason_code')
    const comment = ctx.request.input('comment')
    return submitAction(
      ctx,
      async (actor) => {
        const ids = selectedIds(ctx)
        if (ids.length === 0) throw ActionError.general('Select at least one slip.')
        return runBulk(ids, async (id) => {
          const result = await reviewSlip(
            { slip_id: id, decision: 'reject', reason_code: reasonCode, comment },
            actor
          )
          return `slip ${id}: rejected; order ${result.order.platformOrderId} is ${result.order.status}`
        })
      },
      (results) => {
        flashBulkResults(ctx, 'Reject slips', results)
        return ctx.response.redirect().back()
      }
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
      async (actor) => {
        if (what === 'freeze') return { text: `frozen`, order: await freezePayment(input, actor) }
        if (what === 'unfreeze') {
          return { text: 'unfrozen', order: await unfreezePayment(input, actor) }
        }
        const result = await markPaymentPaid({ ...input, amount_policy: amountPolicy(ctx) }, actor)
        return result.outcome === 'approval_requested'
          ? {
              text: `above the platform’s four-eyes threshold: approval request #${result.request.id} opened for a second operator`,
              order: result.order,
            }
          : { text: 'marked paid', order: result.order }
      },
      ({ text, order }) => {
        ctx.session.flash('success', `${order.platformOrderId}: ${text} (now ${order.status}).`)
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
