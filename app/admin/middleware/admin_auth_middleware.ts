import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import adminConfig from '#config/admin'
import type Operator from '#operators/models/operator'
import { ABILITY_BY_ROLE, type OperatorRole } from '#operators/roles'
import { unacknowledgedCount } from '#notifications/notifications'

/** Session keys of the sign-in: when it completed, for the absolute session limit. */
export const SIGNED_IN_AT = 'admin_signed_in_at'

/**
 * Every back-office page past the login: an operator signed in with both
 * factors, not disabled, within the absolute session limit, with the role
 * the route needs (checked here, on the server, for every method: a viewer's
 * POST is refused with 403, not merely hidden).
 */
export default class AdminAuthMiddleware {
  async handle(ctx: HttpContext, next: NextFn, options: { role?: OperatorRole } = {}) {
    const { auth, session, response } = ctx
    // auth.check() also makes auth.user this operator for the rest of the request.
    const operator = (await auth.check()) ? (auth.user as Operator) : null
    const signedInAt = Number(session.get(SIGNED_IN_AT) ?? 0)
    const expired = Date.now() - signedInAt > adminConfig.sessionMaxHours * 3_600_000

    if (!operator || operator.disabledAt || !operator.totpEnabledAt || expired) {
      if (operator) await auth.use('web').logout()
      session.flash('error', operator ? 'Your session ended; please sign in again.' : '')
      return response.redirect('/admin/login')
    }

    await ctx.bouncer.authorize(ABILITY_BY_ROLE[options.role ?? 'viewer'])
    // Every admin sees how many notices wait for them on every page (app/notifications).
    const noticeCount = operator.role === 'admin' ? await unacknowledgedCount(operator.id) : 0
    ctx.view.share({ operator, noticeCount })
    return next()
  }
}
