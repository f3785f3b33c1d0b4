import type { HttpContext } from '@adonisjs/core/http'
import gateway from '#config/gateway'
import { createMerchant } from '#merchants/actions/create_merchant'
import {
  changeMerchantStatus,
  type configureMerchant,
  configureMerchantSettings,
} from '#merchants/actions/configure_merchant'
import { editIpWhitelist } from '#merchants/actions/edit_ip_whitelist'
import { editSettlementAccounts } from '#merchants/actions/edit_settlement_accounts'
import { rotateCredentials } from '#merchants/actions/rotate_credentials'
import { scheduleCredentialRotation } from '#merchants/actions/schedule_credential_rotation'
import { cancelScheduledRotation } from '#merchants/actions/cancel_scheduled_rotation'
import {
  viewCredentialHandover,
  waitingHandovers,
} from '#merchants/actions/view_credential_handover'
import type Operator from '#operators/models/operator'
import type ApprovalRequest from '#approvals/models/approval_request'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import {
  merchantFilters,
  merchantList,
  merchantPage,
  platformCodes,
} from '#admin/queries/merchants'
import { settlementRestriction } from '#merchants/settlement_accounts'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import Merchant from '#merchants/models/merchant'
import { poolGroups } from '#admin/queries/deposit_account_pool'
import { formatThb, parseAmount } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError } from '#core/validation'
import type { Actor } from '#core/actor'
import { submitAction } from '#admin/operator_action'

const PER_PAGE = 25

/** Settings of the settings form: configure_merchant's fields, as named there. */
const SETTINGS = [
  'deposit_group',
  'payout_route',
  'order_ttl_seconds',
  'slip_upload_wait_seconds',
  'payment_fee_rate_bps',
  'withdraw_fee_rate_bps',
  'withdraw_fee_flat',
  'settlement_fee_flat',
  'withdraw_min',
  'withdraw_max',
  'settlement_min',
  'settlement_max',
  'api_rate_limit',
  'comment',
]
const PERMISSIONS = [
  'payment_enabled',
  'withdraw_enabled',
  'settlement_enabled',
  'withdraw_duplicate_check',
]
/** An emptied field clears these settings (no group, no route, unlimited, the default). */
const CLEARABLE = ['deposit_group', 'payout_route', 'withdraw_max', 'api_rate_limit']

/**
 * One-time values (credentials of a new merchant, a rotation's new values)
 * travel in the flash to the GET page that shows them once: never in a page
 * answering a POST, never in a URL.
 */
interface ShownCredentials {
  kind: 'created' | 'rotated'
  merchant_id: string
  token?: string
  secret?: string
  /** When the previous credentials stop working (Bangkok time). */
  previous_valid_until?: string | null
}

/**
 * Several forms share the merchant page, each with its own input names
 * (`rotate_grace_seconds`, `schedule_grace_seconds`...) so that an error or
 * a kept value lands in the right form. Reads the form's inputs without the
 * prefix, as the action names them.
 */
function formInput(ctx: HttpContext, prefix: string, names: string[]) {
  const input = ctx.request.only(names.map((name) => `${prefix}${name}`))
  return Object.fromEntries(names.map((name) => [name, input[`${prefix}${name}`]]))
}

/**
 * Runs the action and, when it refuses, puts each error beside the form's
 * own field (`add.0` → `ip_add`); `fieldOf` returning null shows it on top.
 */
async function inForm<T>(run: Promise<T>, fieldOf: (field: string) => string | null) {
  try {
    return await run
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    throw new ActionError(
      error.errors.map(({ field, message }) => ({
        field: field === null || field === 'merchant_id' ? null : fieldOf(field.split('.')[0]),
        message,
      })),
      error.notFound
    )
  }
}

const prefixedBy = (prefix: string) => (field: string) => `${prefix}${field}`
/** A list form shows its `add` and `comment` fields; a refused removal goes on top. */
const listField = (prefix: string) => (field: string) =>
  field === 'add' || field === 'comment' ? `${prefix}${field}` : null
const onTop = () => null

/** A settings amount ("10000.00", the form's value) as operators read it: "10,000.00". */
const thb = (value: unknown) => {
  const satang = parseAmount(value)
  return satang === null ? value : formatThb(satang)
}

/**
 * The deposit group select: the groups the pool's accounts have, and the
 * merchant's own group when no account has it (kept, and said, so that
 * saving other settings does not clear it).
 */
async function depositGroupOptions(current: string | null) {
  const groups = await poolGroups()
  const options = [
    { value: '', label: 'none (payment create answers 404)' },
    ...groups.map((group) => ({
      value: group.name,
      label: `${group.name} (${group.total} account${group.total === 1 ? '' : 's'})`,
    })),
  ]
  const orphan = current !== null && current !== '' && !groups.some((g) => g.name === current)
  if (orphan) {
    options.push({ value: current, label: `${current} (no deposit account has this group)` })
  }
  return { options, names: groups.map((group) => group.name), orphan }
}

/**
 * Merchants: list, create (credentials shown once), settings, suspend and
 * activate, IP whitelist, settlement accounts, credentials and their
 * rotation (now or scheduled). Every change is a merchant action, audited.
 */
export default class MerchantsController {
  async index({ request, view }: HttpContext) {
    const filters = merchantFilters(request.qs())
    const pageNumber = Math.max(1, Number(request.input('page', 1)) || 1)
    const { page, rows } = await merchantList(filters, pageNumber, PER_PAGE)
    const params = (extra: Record<string, string | undefined>) =>
      new URLSearchParams(
        Object.entries({ ...filters, ...extra }).filter(
          (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''
        )
      ).toString()
    return view.render('admin/merchants/index', {
      filters,
      merchants: rows,
      page,
      platforms: await platformCodes(),
      query: (to: number) => params({ page: String(to) }),
      // A column's header sorts by it; again reverses the order.
      sortQuery: (column: string) =>
        params({
          sort: column,
          dir: filters.sort === column && filters.dir !== 'desc' ? 'desc' : 'asc',
          page: undefined,
        }),
    })
  }

  async create({ view }: HttpContext) {
    return view.render('admin/merchants/new', { platforms: await platformCodes() })
  }

  async store(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        createMerchant(
          ctx.request.only(['platform', 'name', 'order_prefix', 'merchant_id']),
          actor
        ),
      ({ merchant, credentials }) =>
        this.#showOnce(ctx, { kind: 'created', merchant_id: merchant.merchantId, ...credentials })
    )
  }

  /** The one-time values page: shown once from the flash, then gone (a reload leads to the merchant). */
  async credentials({ params, session, response, view }: HttpContext) {
    const shown = session.flashMessages.get('credentials') as ShownCredentials | undefined
    if (!shown || shown.merchant_id !== String(params.merchantId)) {
      return response.redirect(`/admin/merchants/${encodeURIComponent(params.merchantId)}`)
    }
    response.header('Cache-Control', 'no-store')
    return view.render('admin/merchants/credentials', { shown })
  }

  async show({ params, view, auth, session }: HttpContext) {
    const page = await merchantPage(String(params.merchantId))
    if (!page) throw ActionError.notFound('merchant_id', `No merchant ${params.merchantId}`)
    const groups = await depositGroupOptions(page.merchant.deposit_group)
    return view.render('admin/merchants/show', {
      ...page,
      // Changes of this merchant waiting for a second admin, with who may decide them.
      pending: await pendingRequestsFor(
        auth.user as Operator,
        'merchant',
        page.merchant.merchant_id
      ),
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      settlementRequired: await settlementAccountsRequired(page.merchant.merchant_id),
      back: `/admin/merchants/${encodeURIComponent(page.merchant.merchant_id)}`,
      approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
      thb,
      depositGroups: groups.options,
      depositGroupOrphan: groups.orphan,
      payoutRoutes: PAYOUT_CONNECTOR_NAMES,
      defaults: {
        grace_seconds: gateway.credentialGraceSeconds,
        api_rate_limit: gateway.rateLimits.perMerchant,
      },
      ...(await handoverState(auth.user as Operator, String(params.merchantId))),
    })
  }

  /** The settings form: every setting of configure_merchant but the status. */
  async update(ctx: HttpContext) {
    const input: Record<string, unknown> = ctx.request.only(SETTINGS)
    // An unticked checkbox sends nothing: off.
    for (const name of PERMISSIONS) input[name] = ctx.request.input(name) === 'on' ? 'on' : 'off'
    for (const name of CLEARABLE) if (input[name] === '') input[name] = 'none'
    return this.#configure(
      ctx,
      configureMerchantSettings,
      input,
      (field) => field,
      (changed) => `Saved: ${changed.join(', ')}.`
    )
  }

  /** Suspend or activate: confirmed, with a reason kept in the audit log. */
  async status(ctx: HttpContext) {
    const input = formInput(ctx, 'status_', ['status', 'confirm', 'comment'])
    return this.#configure(
      ctx,
      changeMerchantStatus,
      input,
      (field) => (field === 'comment' || field === 'confirm' ? `status_${field}` : null),
      () =>
        input.status === 'suspended'
          ? 'Merchant suspended: every API call of this merchant fails authentication.'
          : 'Merchant activated.'
    )
  }

  /** Adds addresses or blocks (several at once, separated by spaces or commas) or removes one. */
  async ipWhitelist(ctx: HttpContext) {
    const { add, remove, comment } = formInput(ctx, 'ip_', ['add', 'remove', 'comment'])
    return this.#editList(
      ctx,
      (actor) =>
        inForm(
          editIpWhitelist(
            { merchant_id: this.#id(ctx), ...listChange(add, remove), comment },
            actor
          ),
          listField('ip_')
        ),
      (result) => [
        !!result.request && asked(result.request),
        !result.request &&
          result.added.length > 0 &&
          `Added to the IP whitelist: ${result.added.join(', ')}.`,
        !result.request &&
          result.removed.length > 0 &&
          `Removed from the IP whitelist: ${result.removed.join(', ')}.`,
        result.alreadyListed.length > 0 && `Already listed: ${result.alreadyListed.join(', ')}.`,
        result.notListed.length > 0 && `Not listed: ${result.notListed.join(', ')}.`,
      ]
    )
  }

  async settlementAccounts(ctx: HttpContext) {
    const { add, remove, comment } = formInput(ctx, 'settlement_', ['add', 'remove', 'comment'])
    return this.#editList(
      ctx,
      (actor) =>
        inForm(
          editSettlementAccounts(
            { merchant_id: this.#id(ctx), ...listChange(add, remove), comment },
            actor
          ),
          listField('settlement_')
        ),
      (result) => [
        !!result.request && asked(result.request),
        !result.request &&
          result.added.length > 0 &&
          `Settlement account registered: ${result.added.join(', ')}.`,
        !result.request &&
          result.removed.length > 0 &&
          `Settlement account removed: ${result.removed.join(', ')}.`,
      ]
    )
  }

  /**
   * Rotate now: opens an approval request for a second admin; nothing
   * changes until it is approved. Then the requester sees the new values
   * once (viewHandover).
   */
  async rotate(ctx: HttpContext) {
    const input = formInput(ctx, 'rotate_', ['token', 'secret', 'grace_seconds', 'comment'])
    return submitAction(
      ctx,
      (actor) =>
        inForm(
          rotateCredentials({ ...input, merchant_id: this.#id(ctx) }, actor),
          prefixedBy('rotate_')
        ),
      (rotated) => {
        if (rotated.outcome === 'approval_requested') {
          ctx.session.flash(
            'success',
            `approval request #${rotated.request.id} opened: waits for a second admin. Nothing changes until it is approved; then the new values are shown once, to you, on this page.`
          )
          return this.#back(ctx)
        }
        return this.#showOnce(ctx, {
          kind: 'rotated',
          merchant_id: rotated.merchant.merchantId,
          token: rotated.token,
          secret: rotated.secret,
          previous_valid_until: formatGatewayDateTime(rotated.previous_valid_until),
        })
      }
    )
  }

  /** run_at comes from a date-time field without an offset: Bangkok time. */
  async scheduleRotation(ctx: HttpContext) {
    const input = formInput(ctx, 'schedule_', [
      'run_at',
      'token',
      'secret',
      'grace_seconds',
      'comment',
    ])
    return submitAction(
      ctx,
      (actor) =>
        inForm(
          scheduleCredentialRotation({ ...input, merchant_id: this.#id(ctx) }, actor),
          prefixedBy('schedule_')
        ),
      (scheduled) => {
        ctx.session.flash(
          'success',
          scheduled.outcome === 'approval_requested'
            ? `approval request #${scheduled.request.id} opened: waits for a second admin. The rotation is scheduled when approved; once it has run, its new values are shown once, to you, on this page.`
            : `Rotation ${scheduled.rotation.id} scheduled for ${formatGatewayDateTime(scheduled.rotation.runAt)} (Bangkok time).`
        )
        return this.#back(ctx)
      }
    )
  }

  /** Cancelling only stops a rotation: immediate, no second admin. */
  async cancelRotation(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        inForm(
          cancelScheduledRotation(
            { merchant_id: this.#id(ctx), rotation_id: ctx.params.rotationId },
            actor
          ),
          onTop
        ),
      ({ rotation }) => {
        ctx.session.flash('success', `Rotation ${rotation.id} cancelled.`)
        return this.#back(ctx)
      }
    )
  }

  /**
   * The new values of an approved rotation, once, to the operator who asked
   * for it: rendered in the answer to this POST (no-store), never put in the
   * session or a URL; the action clears them as it returns them, so a reload
   * or anyone else is refused.
   */
  async viewHandover(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        inForm(
          viewCredentialHandover(
            { merchant_id: this.#id(ctx), handover_id: ctx.params.handoverId },
            actor
          ),
          onTop
        ),
      (shown) => {
        ctx.response.header('Cache-Control', 'no-store')
        return ctx.view.render('admin/merchants/credentials', {
          shown: {
            kind: 'rotated',
            merchant_id: shown.merchant.merchantId,
            token: shown.token,
            secret: shown.secret,
            previous_valid_until: formatGatewayDateTime(shown.previousValidUntil),
            handover: true,
          },
        })
      }
    )
  }

  #id(ctx: HttpContext) {
    return String(ctx.params.merchantId)
  }

  #back(ctx: HttpContext) {
    return ctx.response.redirect(`/admin/merchants/${encodeURIComponent(this.#id(ctx))}`)
  }

  #showOnce(ctx: HttpContext, shown: ShownCredentials) {
    ctx.session.flash('credentials', shown)
    return ctx.response.redirect(
      `/admin/merchants/${encodeURIComponent(shown.merchant_id)}/credentials`
    )
  }

  #configure(
    ctx: HttpContext,
    configure: typeof configureMerchant,
    input: Record<string, unknown>,
    fieldOf: (field: string) => string | null,
    message: (changed: string[]) => string
  ) {
    return submitAction(
      ctx,
      (actor) => inForm(configure({ ...input, merchant_id: this.#id(ctx) }, actor), fieldOf),
      ({ changed, warnings, request }) => {
        const said = [
          changed.length > 0 ? message(changed) : request ? '' : 'Nothing changed.',
          request ? asked(request) : '',
        ]
        ctx.session.flash('success', said.filter(Boolean).join(' '))
        if (warnings.length > 0) ctx.session.flash('warning', `Warning: ${warnings.join('; ')}.`)
        return this.#back(ctx)
      }
    )
  }

  #editList<T>(
    ctx: HttpContext,
    run: (actor: Actor) => Promise<T>,
    messages: (result: T) => Array<string | false>
  ) {
    return submitAction(ctx, run, (result) => {
      const said = messages(result).filter((text): text is string => !!text)
      ctx.session.flash('success', said.length > 0 ? said.join(' ') : 'Nothing changed.')
      return this.#back(ctx)
    })
  }
}

/**
 * The merchant page's new credentials waiting for their one view: the
 * operator's own (a button) and the others' (who must look).
 */
async function handoverState(operator: Operator, merchantId: string) {
  const merchant = await Merchant.findBy('merchant_id', merchantId)
  const waiting = merchant ? await waitingHandovers(merchant) : []
  return {
    myHandovers: waiting.filter((handover) => handover.operator_id === operator.id),
    othersHandovers: waiting.filter((handover) => handover.operator_id !== operator.id),
  }
}

/** Whether the merchant settles only to registered accounts (it has or had one). */
async function settlementAccountsRequired(merchantId: string) {
  const merchant = await Merchant.findByOrFail('merchant_id', merchantId)
  return (await settlementRestriction(merchant.id)).required
}

/** What the page says when a change waits for a second admin. */
function asked(request: ApprovalRequest) {
  return `approval request #${request.id} opened: waits for a second admin. Nothing of it applies until another admin approves it.`
}

/** A list form's change: entries to add (typed, separated by spaces, commas or lines) and one to remove. */
function listChange(add: unknown, remove: unknown) {
  const entries = String(add ?? '')
    .split(/[\s,;]+/)
    .filter(Boolean)
  return {
    add: entries.length > 0 ? entries : undefined,
    remove: typeof remove === 'string' && remove !== '' ? [remove] : undefined,
  }
}
