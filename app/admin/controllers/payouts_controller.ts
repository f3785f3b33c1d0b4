import type { HttpContext } from '@adonisjs/core/http'
import { createReadStream } from 'node:fs'
import { basename } from 'node:path'
import app from '@adonisjs/core/services/app'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { recordConfirmedPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { downloadBulkFile } from '#payouts/actions/download_bulk_file'
import { retryPayoutDispatch } from '#payouts/actions/retry_payout_dispatch'
import {
  RELEASE_REJECTED_ACTION,
  requestPayoutRelease,
} from '#payouts/actions/release_rejected_payout'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import {
  bulkFileQueue,
  payoutPage,
  recentBulkFiles,
  WAITING_MEANING,
  WAITING_STATUSES,
  waitingPayoutFilters,
  waitingPayouts,
} from '#admin/queries/payouts'
import { negativeBalanceMerchants } from '#admin/queries/negative_balances'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type Operator from '#operators/models/operator'
import type PayoutOrder from '#payouts/models/payout_order'
import type ApprovalRequest from '#approvals/models/approval_request'
import { BANKS } from '#core/banks'
import { ActionError } from '#core/validation'
import { operatorActor, submitAction } from '#admin/operator_action'

const PER_PAGE = 25

/**
 * Where the back-office writes bulk payout files: the directory
 * `payouts:export` writes to by default, so a file is found again whichever
 * way it was exported.
 */
const BULK_FILE_DIRECTORY = () => app.makePath('tmp/payouts')

/**
 * Runs `work`; refusals about fields this page has no control for (the
 * order's id in the URL, a hidden bank) are shown on top of the page instead.
 */
async function withFields<T>(fields: string[], work: () => Promise<T>) {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    throw new ActionError(
      error.errors.map((item) =>
        item.field && fields.includes(item.field) ? item : { field: null, message: item.message }
      ),
      error.notFound
    )
  }
}

/**
 * The release form names its reason field `release_reason` (the bank's
 * answer form beside it has its own `reason`): the action's refusals on
 * `reason` are shown there.
 */
async function asReleaseForm<T>(work: () => Promise<T>) {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    throw new ActionError(
      error.errors.map((item) =>
        item.field === 'reason' ? { ...item, field: 'release_reason' } : item
      ),
      error.notFound
    )
  }
}

/** What the page says once the bank's answer is recorded, or waits for a second operator. */
function outcomeMessage(order: PayoutOrder, request: ApprovalRequest | null) {
  if (request) {
    return `${order.platformOrderId}: approval request #${request.id} opened: recording it as failed gives its hold back to the merchant, so a second operator carries it out; nothing moved yet.`
  }
  return order.status === 'success'
    ? `${order.platformOrderId}: success recorded; the merchant's SUCCESS callback is written.`
    : `${order.platformOrderId}: failed (${order.failureReason}) recorded; the merchant's FAIL callback is written.`
}

function sendCsv(ctx: HttpContext, path: string) {
  ctx.response.header('Content-Type', 'text/csv; charset=utf-8')
  ctx.response.header('Content-Disposition', `attachment; filename="${basename(path)}"`)
  ctx.response.header('Cache-Control', 'no-store')
  ctx.response.stream(createReadStream(path))
}

/**
 * Withdrawals and settlements waiting on a bank: the list with filters, the
 * bulk payout files per bank, the bank's answer recorded by hand, a failed
 * dispatch retried, and the merchants whose balance went negative. Viewers
 * read; every change is an operator action (the same ones the commands run).
 */
export default class PayoutsController {
  async index(ctx: HttpContext) {
    const { request, view } = ctx
    const filters = waitingPayoutFilters(request.qs())
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const list = await waitingPayouts(filters, pageNumber, PER_PAGE)
    const shown = Object.fromEntries(
      Object.entries(filters).filter(([, value]) => value !== undefined)
    ) as Record<string, string>
    return view.render('admin/payouts/index', {
      filters,
      rows: list.rows,
      page: list.page,
      query: (to: number) => new URLSearchParams({ ...shown, page: String(to) }).toString(),
      bulkQueue: await bulkFileQueue(),
      bulkFiles: await recentBulkFiles(),
      negative: await negativeBalanceMerchants(),
      statuses: WAITING_STATUSES.map((value) => ({
        value,
        label: `${value}: ${WAITING_MEANING[value]}`,
      })),
      banks: Object.keys(BANKS),
      routes: PAYOUT_CONNECTOR_NAMES,
    })
  }

  async show({ params, view, auth, session }: HttpContext) {
    const payout = await payoutPage(String(params.platformOrderId))
    if (!payout) {
      throw ActionError.notFound(
        'platform_order_id',
        `No withdrawal or settlement ${params.platformOrderId}`
      )
    }
    const operator = auth.user as Operator
    // A release waiting for a second operator, with what this operator may do with it.
    const pending = await pendingRequestsFor(operator, payout.kind, payout.platform_order_id)
    return view.render('admin/payouts/show', {
      payout,
      releasePending: pending.find((request) => request.action === RELEASE_REJECTED_ACTION) ?? null,
      pendingRequests: pending,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: `/admin/payouts/${encodeURIComponent(payout.platform_order_id)}`,
      approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
    })
  }

  /**
   * Exports one bank's queued bulk-file payouts (they become pending, audited
   * by the action) and sends the file. The file stays on the server: if the
   * download is lost it is downloaded again from the recent files.
   */
  async export(ctx: HttpContext) {
    const bank = String(ctx.request.input('bank', '')).trim()
    return submitAction(
      ctx,
      (actor) =>
        withFields([], () =>
          exportBulkFile({ directory: BULK_FILE_DIRECTORY(), bank, one_bank: true }, actor)
        ),
      (result) => {
        const file = result.files[0]
        if (!file) {
          ctx.session.flash(
            'warning',
            `No queued bulk-file payout to ${bank}: no file was written.`
          )
          return ctx.response.redirect('/admin/payouts')
        }
        return sendCsv(ctx, file.path)
      }
    )
  }

  /** A bulk payout file exported earlier, again (audited: it holds account numbers). */
  async file(ctx: HttpContext) {
    const name = String(ctx.params.file)
    const path = await downloadBulkFile(BULK_FILE_DIRECTORY(), name, operatorActor(ctx))
    if (!path) {
      ctx.session.flash('error', `${name} is not on this server.`)
      return ctx.response.redirect('/admin/payouts')
    }
    return sendCsv(ctx, path)
  }

  /**
   * The bank's final answer, typed from its report and confirmed (what
   * `payouts:complete` does); or, for a bulk-file payout at the bank, its
   * rejection, which asks a second operator to release it (what
   * `payouts:release-rejected` does).
   */
  async outcome(ctx: HttpContext) {
    const platformOrderId = String(ctx.params.platformOrderId)
    if (ctx.request.input('outcome') === 'rejected') return this.release(ctx, platformOrderId)
    const input = ctx.request.only(['outcome', 'reason', 'confirm'])
    return submitAction(
      ctx,
      (actor) =>
        withFields(['outcome', 'reason', 'confirm'], () =>
          recordConfirmedPayoutOutcome({ ...input, platform_order_id: platformOrderId }, actor)
        ),
      ({ order, request }) => {
        ctx.session.flash('success', outcomeMessage(order, request))
        // A failure waiting for a second operator: back to the payout, where the request shows.
        return ctx.response.redirect(
          request ? `/admin/payouts/${encodeURIComponent(order.platformOrderId)}` : '/admin/payouts'
        )
      }
    )
  }

  /**
   * "The bank rejected it": opens the approval request that releases the
   * payout once a second operator approves; nothing moves now. Its refusals
   * are shown at the top of the release form, the reason's beside its field.
   */
  private async release(ctx: HttpContext, platformOrderId: string) {
    const page = `/admin/payouts/${encodeURIComponent(platformOrderId)}`
    return submitAction(
      ctx,
      (actor) =>
        asReleaseForm(() =>
          requestPayoutRelease(
            { platform_order_id: platformOrderId, reason: ctx.request.input('release_reason') },
            actor
          )
        ),
      ({ order, request }) => {
        ctx.session.flash(
          'success',
          `${order.platformOrderId}: approval request #${request.id} opened; the payout is released (failed, its hold back to the merchant's balance) when a second operator approves it.`
        )
        return ctx.response.redirect(page)
      },
      { formFields: ['release_reason'], action: 'release' }
    )
  }

  /** Runs the dispatch of a new order, or of a queued one on a direct connector, again now. */
  async retry(ctx: HttpContext) {
    const platformOrderId = String(ctx.params.platformOrderId)
    return submitAction(
      ctx,
      (actor) =>
        withFields([], () =>
          retryPayoutDispatch(
            { platform_order_id: platformOrderId, comment: ctx.request.input('comment') },
            actor
          )
        ),
      ({ order, from }) => {
        const moved = order.status === from ? `still ${order.status}` : `${from} → ${order.status}`
        ctx.session.flash(
          'success',
          `${order.platformOrderId}: dispatch retried (${moved}${order.status === 'queue' ? ', waiting for its bulk payout file' : ''}).`
        )
        return ctx.response.redirect().back()
      }
    )
  }
}
