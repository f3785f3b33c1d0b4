import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import DepositAccount from '#payments/models/deposit_account'
import { createDepositAccount } from '#payments/actions/create_deposit_account'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { scheduleMaintenanceWindow } from '#payments/actions/schedule_maintenance_window'
import { cancelMaintenanceWindow } from '#payments/actions/cancel_maintenance_window'
import { depositAccountUsage } from '#payments/deposit_account_usage'
import { listMaintenanceWindows, presentMaintenanceWindow } from '#payments/maintenance_windows'
import {
  POOL_SORTS,
  poolGroups,
  poolQuery,
  poolRow,
  recentlyCancelledWindows,
  windowsOfAccount,
  type PoolFilters,
  type PoolSort,
} from '#admin/queries/deposit_account_pool'
import { BANKS } from '#core/banks'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import {
  NEW_DEPOSIT_ACCOUNT_TARGET,
  CREATE_DEPOSIT_ACCOUNT_ACTION,
} from '#payments/actions/create_deposit_account'
import type Operator from '#operators/models/operator'
import { definedLayoutChoices } from '#reconciliation/statement_layouts'
import type ApprovalRequest from '#approvals/models/approval_request'

const PER_PAGE = 25

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

/** What the forms' selects offer. */
const CHOICES = {
  channels: ['qr', 'transfer', 'external'].map((value) => ({ value, label: value })),
  banks: Object.keys(BANKS).map((value) => ({ value, label: value })),
}

/** The statement layouts an account may read its files with (and none: neutral, or recognised). */
async function layoutChoices() {
  const layouts = await definedLayoutChoices()
  return {
    statementLayouts: [
      { value: '', label: 'none: neutral (a KBiz export is recognised)' },
      ...layouts.map((layout) => ({
        value: String(layout.id),
        label: `${layout.name}${layout.bank ? ` (${layout.bank})` : ''} v${layout.version}`,
      })),
    ],
  }
}

/** "approval request #12 opened: waits for a second admin". */
function opened(request: ApprovalRequest) {
  return `approval request #${request.id} opened: waits for a second admin`
}

/**
 * The live approval requests on the pool, for the list: the changes
 * waiting on each account (by account id) and the new accounts waiting to be
 * added, each with what the operator may do with it.
 */
async function poolRequests(operator: Operator) {
  const rows = await db
    .from('approval_requests')
    .whereIn('target_type', ['deposit_account', NEW_DEPOSIT_ACCOUNT_TARGET])
    .where('status', 'pending')
    .where('expires_at', '>', new Date())
    .orderBy('id')
    .select('id', 'target_type', 'target_id', 'action')
  const changes = new Map<number, number>()
  const newTargets = new Set<string>()
  for (const row of rows) {
    if (row.target_type === 'deposit_account') changes.set(Number(row.target_id), Number(row.id))
    else if (row.action === CREATE_DEPOSIT_ACCOUNT_ACTION) newTargets.add(String(row.target_id))
  }
  const additions = []
  for (const target of newTargets) {
    additions.push(...(await pendingRequestsFor(operator, NEW_DEPOSIT_ACCOUNT_TARGET, target)))
  }
  return { changes, additions: additions.sort((a, b) => a.id - b.id) }
}

const DECISION_CODES = {
  approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
  rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
}

function windowRow(window: Parameters<typeof presentMaintenanceWindow>[0]) {
  const shown = presentMaintenanceWindow(window)
  return {
    ...shown,
    takes_out: shown.bank
      ? `every ${shown.bank} account`
      : `deposit account ${shown.deposit_account_id}`,
  }
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
  async index(ctx: HttpContext) {
    const { request, view, auth, session } = ctx
    const filters: PoolFilters = {}
    for (const key of ['group', 'channel', 'bank', 'active'] as const) {
      const value = String(request.input(key, '')).trim().slice(0, 64)
      if (value) filters[key] = value
    }
    const sort: PoolSort = POOL_SORTS.includes(request.input('sort'))
      ? request.input('sort')
      : 'priority'
    const dir = request.input('dir') === 'asc' ? 'asc' : 'desc'
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)

    const page = await poolQuery(filters, sort, dir).paginate(pageNumber, PER_PAGE)
    const accounts = page.all()
    const usage = await depositAccountUsage(accounts)
    const rows = accounts.map((account) => poolRow(account, usage.get(account.id)!))
    const groups = await poolGroups()
    const listed = new Map<string, typeof rows>()
    for (const row of rows) {
      listed.set(row.deposit_group, [...(listed.get(row.deposit_group) ?? []), row])
    }

    const requests = await poolRequests(auth.user as Operator)
    const filterQuery = (extra: Record<string, string>) =>
      new URLSearchParams({ ...filters, sort, dir, ...extra }).toString()
    return view.render('admin/deposit_accounts/index', {
      filters,
      sort,
      dir,
      page,
      query: (to: number) => filterQuery({ page: String(to) }),
      /** The link of a sortable column heading: the other direction when already sorted by it. */
      sortQuery: (column: PoolSort) =>
        filterQuery({ sort: column, dir: sort === column && dir === 'desc' ? 'asc' : 'desc' }),
      groups: [...listed.entries()].map(([name, groupRows]) => ({
        name,
        total: groups.find((group) => group.name === name)?.total ?? groupRows.length,
        accounts: groupRows,
      })),
      groupChoices: groups.map((group) => ({
        value: group.name,
        label: `${group.name} (${group.total})`,
      })),
      windows: (await listMaintenanceWindows()).map(windowRow),
      cancelledWindows: (await recentlyCancelledWindows()).map(windowRow),
      /** Account id → the approval request waiting on it. */
      pendingChanges: Object.fromEntries(requests.changes),
      pendingAdditions: requests.additions,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/deposit-accounts',
      ...DECISION_CODES,
      ...CHOICES,
    })
  }

  async create({ view }: HttpContext) {
    return view.render('admin/deposit_accounts/new', { ...CHOICES, ...(await layoutChoices()) })
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
    const usage = await depositAccountUsage([account])
    return view.render('admin/deposit_accounts/show', {
      account: poolRow(account, usage.get(account.id)!),
      providerConfig: account.providerConfig ? JSON.stringify(account.providerConfig) : '',
      windows: (await windowsOfAccount(account)).map(windowRow),
      pendingRequests: await pendingRequestsFor(
        auth.user as Operator,
        'deposit_account',
        String(account.id)
      ),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: `/admin/deposit-accounts/${account.id}`,
      statementLayoutId:
        account.statementLayoutId === null ? '' : String(account.statementLayoutId),
      ...DECISION_CODES,
      ...CHOICES,
      ...(await layoutChoices()),
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
      async (actor) => {
        if (ctx.request.input('confirm') !== 'on') {
          throw ActionError.field('confirm', 'tick the box to confirm the switch')
        }
        return updateDepositAccount({ id, active, comment: ctx.request.input('comment') }, actor)
      },
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
