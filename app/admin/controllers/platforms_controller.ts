import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import Platform from '#merchants/models/platform'
import { createPlatform } from '#merchants/actions/create_platform'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { platformSnapshot } from '#merchants/platform_rules'
import { ActionError } from '#core/validation'
import { submitAction } from '#admin/operator_action'

/** Platforms (tenants): list, create, edit, and the deposit killswitch. Admins change them. */
export default class PlatformsController {
  async index({ view }: HttpContext) {
    const platforms = await Platform.query().orderBy('code')
    const counts = await db
      .from('merchants')
      .groupBy('platform_id')
      .select('platform_id')
      .count('* as total')
    const merchantsOf = new Map(counts.map((row) => [row.platform_id, Number(row.total)]))
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

  async show({ view, params }: HttpContext) {
    const platform = await Platform.findBy('code', String(params.code))
    if (!platform) throw ActionError.notFound('code', `no platform "${params.code}"`)
    return view.render('admin/platforms/show', { platform: platformSnapshot(platform) })
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

  /** The killswitch, confirmed: switching deposits off makes every payment create answer 503. */
  async deposits(ctx: HttpContext) {
    const enabled = ctx.request.input('deposit_enabled')
    if (ctx.request.input('confirm') !== 'on') {
      return submitAction(
        ctx,
        async () => {
          throw ActionError.field('confirm', 'tick the box to confirm the switch')
        },
        () => null
      )
    }
    return this.#configure(
      ctx,
      { deposit_enabled: enabled, comment: ctx.request.input('comment') },
      enabled === 'on'
        ? 'Deposits switched on.'
        : 'Deposits switched off: payment creates answer 503.'
    )
  }

  #configure(ctx: HttpContext, input: Record<string, unknown>, message: string) {
    const code = String(ctx.params.code)
    return submitAction(
      ctx,
      (actor) => configurePlatform({ ...input, code }, actor),
      ({ changed, requests }) => {
        // Switching deposits back on (or weakening four eyes) waits for a second admin.
        const asked = requests.map((request) => `#${request.id}`).join(', ')
        const done = changed.length > 0 ? message : requests.length > 0 ? '' : 'Nothing changed.'
        ctx.session.flash(
          'success',
          asked ? `${done} Waiting for a second admin's approval: request ${asked}.`.trim() : done
        )
        return ctx.response.redirect(`/admin/platforms/${code}`)
      }
    )
  }
}
