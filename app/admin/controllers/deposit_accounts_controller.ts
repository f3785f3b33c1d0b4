import type { HttpContext } from '@adonisjs/core/http'
import DepositAccount from '#payments/models/deposit_account'
import { createDepositAccount } from '#payments/actions/create_deposit_account'
import {
  switchDepositAccount,
  updateDepositAccount,
} from '#payments/actions/update_deposit_account'
import { scheduleMaintenanceWindow } from '#payments/actions/schedule_maintenance_window'
import { cancelMaintenanceWindow } from '#payments/actions/cancel_maintenance_window'
import {
  ACCOUNT_CHOICES,
  depositAccountPage,
  layoutChoices,
  poolPage,
  windowRow,
} from '#admin/views/deposit_accounts'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'
import { reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type Operator from '#operators/models/operator'
import type ApprovalRequest from '#approvals/models/approval_request'

/** Every field of an account as the forms send it (the action's input names). */
const ACCOUNT_FIELDS = [
  'deposit_group',
  'channel',
  'bank',
  'account_no',
  'account_name',
  'promptpay_id',
  'biller_id',
  'provider',
  'provider_config',
  'min_amount',
  'max_amount',
  'hourly_count_limit',
  'hourly_amount_limit',
  'daily_count_limit',
  'daily_amount_limit',
  'max_adjustment',
  'priority',
  'statement_layout_id',
  'comment',
]

/** Optional settings: emptied on the edit form, they are cleared (a limit becomes unlimited). */
const CLEARABLE_FIELDS = [
  'promptpay_id',
  'biller_id',
  'provider',
  'provider_config',
  'max_amount',
  'hourly_count_limit',
  'hourly_amount_limit',
  'daily_count_limit',
  'daily_amount_limit',
  'statement_layout_id',
]

/** "approval request #12 opened: waits for a second admin". */
function opened(request: ApprovalRequest) {
  return `approval request #${request.id} opened: waits for a second admin`
}

const DECISION_CODES = {
  approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
  rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
}

/**
 * The deposit-account pool: accounts by deposit group with their usage
 * beside every limit, create and edit, activate and deactivate, and
 * maintenance windows. Every change is one of the pool's actions, as the
 * deposit-account commands run them; the actions decide what waits for a
 * second admin (a new account, a change that could send money elsewhere)
 * and this maps it to the flash message, and the pages show the requests.
 */
export default class DepositAccountsController {
  async index({ request, view, auth, session }: HttpContext) {
    return view.render('admin/deposit_accounts/index', {
      ...(await poolPage(request.qs(), auth.user as Operator)),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/deposit-accounts',
      ...DECISION_CODES,
      ...ACCOUNT_CHOICES,
    })
  }

  async create({ view }: HttpContext) {
    return view.render('admin/deposit_accounts/new', {
      ...ACCOUNT_CHOICES,
      ...(await layoutChoices()),
    })
  }

  async store(ctx: HttpContext) {
    const input = ctx.request.only(ACCOUNT_FIELDS)
    // An unticked checkbox sends nothing.
    input.active = ctx.request.input('active') === 'on' ? 'on' : 'off'
    return submitAction(
      ctx,
      (actor) => createDepositAccount(input, actor),
      ({ account, request }) => {
        if (request) {
          // Nothing is in the pool yet: back to an empty form, the request named.
          ctx.session.flash(
            'success',
            `New deposit account ${request.targetId} in group ${String(input.deposit_group ?? '').trim()}: ` +
              `${opened(request)}; it is not in the pool until approved.`
          )
          return ctx.response.redirect('/admin/deposit-accounts/new')
        }
        ctx.session.flash(
          'success',
          `Deposit account ${account.id} added to group ${account.depositGroup}.`
        )
        return ctx.response.redirect(`/admin/deposit-accounts/${account.id}`)
      }
    )
  }

  async show({ view, params, auth, session }: HttpContext) {
    const account = await DepositAccount.find(Number(params.id) || 0)
    if (!account) throw ActionError.notFound('id', `no deposit account with id ${params.id}`)
    return view.render('admin/deposit_accounts/show', {
      ...(await depositAccountPage(account, auth.user as Operator)),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: `/admin/deposit-accounts/${account.id}`,
      ...DECISION_CODES,
      ...ACCOUNT_CHOICES,
    })
  }

  async update(ctx: HttpContext) {
    const input = ctx.request.only(ACCOUNT_FIELDS)
    for (const field of CLEARABLE_FIELDS) {
      if (input[field] === '') input[field] = 'none'
    }
    const id = String(ctx.params.id)
    return submitAction(
      ctx,
      (actor) => updateDepositAccount({ ...input, id }, actor),
      ({ changed, request, asked }) => {
        const saved = changed.length > 0 ? `Saved: ${changed.join(', ')}.` : null
        const waits = request ? `${asked.join(', ')}: ${opened(request)}.` : null
        ctx.session.flash('success', [saved, waits].filter(Boolean).join(' ') || 'Nothing changed.')
        return ctx.response.redirect(`/admin/deposit-accounts/${id}`)
      }
    )
  }

  /** Activate or deactivate, confirmed: an inactive account takes no new order (open ones stay valid). */
  async active(ctx: HttpContext) {
    const id = String(ctx.params.id)
    const active = ctx.request.input('active') === 'on' ? 'on' : 'off'
    return submitAction(
      ctx,
      (actor) =>
        switchDepositAccount(
          {
            id,
            active,
            confirm: ctx.request.input('confirm'),
            comment: ctx.request.input('comment'),
          },
          actor
        ),
      ({ changed, request }) => {
        ctx.session.flash(
          'success',
          request
            ? `Activating deposit account ${id}: ${opened(request)}; no order is drawn on it until approved.`
            : changed.length === 0
              ? 'Nothing changed.'
              : active === 'on'
                ? `Deposit account ${id} is active: selection draws orders on it again.`
                : `Deposit account ${id} is inactive: no new order is drawn on it.`
        )
        return ctx.response.redirect(`/admin/deposit-accounts/${id}`)
      }
    )
  }

  async scheduleMaintenance(ctx: HttpContext) {
    const input = ctx.request.only(['deposit_account_id', 'bank', 'from', 'to', 'reason'])
    return submitAction(
      ctx,
      (actor) => scheduleMaintenanceWindow(input, actor),
      (window) => {
        const shown = windowRow(window)
        ctx.session.flash(
          'success',
          `Maintenance window ${shown.id}: ${shown.takes_out} out of selection from ${shown.from} to ${shown.to} (GMT+7).`
        )
        return ctx.response.redirect().back()
      }
    )
  }

  async cancelMaintenance(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        cancelMaintenanceWindow(
          { id: String(ctx.params.windowId), comment: ctx.request.input('comment') },
          actor
        ),
      (window) => {
        ctx.session.flash(
          'success',
          `Maintenance window ${window.id} cancelled: ${windowRow(window).takes_out} back in selection.`
        )
        return ctx.response.redirect().back()
      }
    )
  }
}
