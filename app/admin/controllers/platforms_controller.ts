import type { HttpContext } from '@adonisjs/core/http'
import Platform from '#merchants/models/platform'
import { createPlatform } from '#merchants/actions/create_platform'
import { configurePlatform, switchPlatformDeposits } from '#merchants/actions/configure_platform'
import { platformSnapshot } from '#merchants/platform_rules'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'
import { merchantCountsByPlatform } from '#admin/queries/merchants'
import { pendingRequestsFor } from '#admin/pending_requests'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import { formatThb } from '#core/money'
import type Operator from '#operators/models/operator'

const options = (codes: readonly string[]) => codes.map((code) => ({ value: code, label: code }))

/**
 * Platforms (tenants): list, create, edit, the deposit killswitch and the
 * four-eyes threshold, with the requests waiting on them. Admins change them.
 */
export default class PlatformsController {
  async index({ view }: HttpContext) {
    const platforms = await Platform.query().orderBy('code')
    const merchantsOf = await merchantCountsByPlatform()
    return view.render('admin/platforms/index', {
      platforms: platforms.map((platform) => ({
        ...platformSnapshot(platform),
        merchants: merchantsOf.get(platform.id) ?? 0,
      })),
    })
  }

  async create({ view }: HttpContext) {
    return view.render('admin/platforms/new')
  }

  async store(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        createPlatform(
          ctx.request.only(['code', 'name', 'payment_page_domain']) as Record<string, unknown>,
          actor
        ),
      (platform) => {
        ctx.session.flash('success', `Platform ${platform.code} created.`)
        return ctx.response.redirect(`/admin/platforms/${platform.code}`)
      }
    )
  }

  async show({ view, params, auth }: HttpContext) {
    const platform = await Platform.findBy('code', String(params.code))
    if (!platform) throw ActionError.notFound('code', `no platform "${params.code}"`)
    const operator = auth.user as Operator
    const pending = await pendingRequestsFor(operator, 'platform', platform.code)
    return view.render('admin/platforms/show', {
      platform: platformSnapshot(platform),
      /** "50,000.00" THB, or null: four eyes never required. */
      threshold: platform.fourEyesThreshold === null ? null : formatThb(platform.fourEyesThreshold),
      pending,
      back: `/admin/platforms/${platform.code}`,
      approveCodes: options(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: options(APPROVAL_REJECT_REASON_CODES),
    })
  }

  async update(ctx: HttpContext) {
    const input = ctx.request.only([
      'name',
      'payment_page_domain',
      'deposit_hours',
      'settlement_hours',
      'comment',
    ])
    // An emptied domain field removes the domain.
    if (input.payment_page_domain === '') input.payment_page_domain = 'none'
    return this.#configure(ctx, input, 'Settings saved.')
  }

  /**
   * The four-eyes threshold: THB (thousands separators allowed), or empty
   * for "not required". Lowering it applies at once; raising or removing it
   * opens a request for a second admin.
   */
  async fourEyes(ctx: HttpContext) {
    const raw = ctx.request.input('four_eyes_threshold')
    const threshold = typeof raw === 'string' && raw.trim() === '' ? 'none' : raw
    return this.#configure(
      ctx,
      { four_eyes_threshold: threshold ?? '', comment: ctx.request.input('comment') },
      'Four-eyes threshold saved.'
    )
  }

  /** The killswitch, confirmed: switching deposits off makes every payment create answer 503. */
  async deposits(ctx: HttpContext) {
    const enabled = ctx.request.input('deposit_enabled')
    return this.#configure(
      ctx,
      {
        deposit_enabled: enabled,
        confirm: ctx.request.input('confirm'),
        comment: ctx.request.input('comment'),
      },
      enabled === 'on'
        ? 'Deposits switched on.'
        : 'Deposits switched off: payment creates answer 503.',
      switchPlatformDeposits
    )
  }

  #configure(
    ctx: HttpContext,
    input: Record<string, unknown>,
    message: string,
    configure: typeof configurePlatform = configurePlatform
  ) {
    const code = String(ctx.params.code)
    return submitAction(
      ctx,
      (actor) => configure({ ...input, code }, actor),
      ({ changed, requests, superseded }) => {
        // Switching deposits back on (or weakening four eyes) waits for a second admin.
        const asked = requests.map((request) => `#${request.id}`).join(', ')
        const done = changed.length > 0 ? message : requests.length > 0 ? '' : 'Nothing changed.'
        const closed = superseded.map((request) => `#${request.id}`).join(', ')
        ctx.session.flash(
          'success',
          [
            asked
              ? `${done} Waiting for a second admin's approval: request ${asked}.`.trim()
              : done,
            closed ? `Pending request ${closed} closed: superseded by this change.` : '',
          ]
            .filter(Boolean)
            .join(' ')
        )
        return ctx.response.redirect(`/admin/platforms/${code}`)
      }
    )
  }
}
