import type { HttpContext } from '@adonisjs/core/http'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import { createOperator } from '#operators/actions/create_operator'
import { updateOperator } from '#operators/actions/update_operator'
import { unlockOperator } from '#operators/actions/unlock_operator'
import { accountFailureCount, accountLockedFor } from '#operators/sign_in_limits'
import { formatGatewayDateTime } from '#core/clock'
import { submitAction } from '#admin/operator_action'

const ROLE_CHOICES = [...OPERATOR_ROLES].reverse().map((role) => ({ value: role, label: role }))

/**
 * Operators (admins only): list, invite (the one-time enrolment link is shown
 * once), change a role, disable or enable, reset the second factor, issue a
 * new link for a forgotten password, unlock an account locked by failed
 * sign-ins. The same actions as the operator:*
 * commands; an admin cannot change their own access.
 */
export default class OperatorsController {
  async index({ view, auth, session }: HttpContext) {
    const operators = await Operator.query().orderBy('email')
    const locks = await Promise.all(
      operators.map(async (operator) => ({
        seconds: await accountLockedFor(operator.email),
        failures: await accountFailureCount(operator.email),
      }))
    )
    return view.render('admin/operators/index', {
      roles: ROLE_CHOICES,
      self: (auth.user as Operator).id,
      link: session.flashMessages.get('enrolment_link'),
      operators: operators.map((operator, index) => ({
        id: operator.id,
        email: operator.email,
        name: operator.name,
        role: operator.role,
        enabled: operator.disabledAt === null,
        password: operator.password !== null,
        link_expires: formatGatewayDateTime(operator.enrolmentExpiresAt),
        second_factor: operator.totpEnabledAt !== null,
        last_login: formatGatewayDateTime(operator.lastLoginAt),
        locked_minutes: locks[index].seconds > 0 ? Math.ceil(locks[index].seconds / 60) : 0,
        failures: locks[index].failures,
      })),
    })
  }

  async store(ctx: HttpContext) {
    return submitAction(
      ctx,
      (actor) =>
        createOperator(
          ctx.request.only(['email', 'name', 'role']) as Record<string, unknown>,
          actor
        ),
      ({ operator, link }) => {
        ctx.session.flash('success', `Operator ${operator.email} (${operator.role}) created.`)
        ctx.session.flash('enrolment_link', {
          email: operator.email,
          url: link.url,
          expires: formatGatewayDateTime(link.expiresAt),
        })
        return ctx.response.redirect('/admin/operators')
      }
    )
  }

  /** One change per form: role, access (enable/disable), reset 2FA, or a new link. */
  async update(ctx: HttpContext) {
    const operator = await Operator.findOrFail(Number(ctx.params.id))
    const change = String(ctx.request.input('change', ''))
    const input: Record<string, unknown> = {
      email: operator.email,
      comment: ctx.request.input('comment'),
    }
    if (change === 'role') input.role = ctx.request.input('role')
    if (change === 'disable') input.enabled = 'off'
    if (change === 'enable') input.enabled = 'on'
    if (change === 'reset_second_factor') input.reset_second_factor = 'on'
    if (change === 'new_link') input.new_link = 'on'
    return submitAction(
      ctx,
      (actor) => updateOperator(input, actor),
      ({ changed, link }) => {
        if (link) {
          ctx.session.flash('enrolment_link', {
            email: operator.email,
            url: link.url,
            expires: formatGatewayDateTime(link.expiresAt),
          })
        }
        ctx.session.flash(
          'success',
          link
            ? `New enrolment link for ${operator.email}; their password no longer works.`
            : changed.length > 0
              ? `Operator ${operator.email}: ${changed.join(', ')} changed; their sessions ended.`
              : 'Nothing changed.'
        )
        return ctx.response.redirect('/admin/operators')
      }
    )
  }

  /** Lifts the lock failed sign-ins put on an account (admins only, like the whole page). */
  async unlock(ctx: HttpContext) {
    const operator = await Operator.findOrFail(Number(ctx.params.id))
    return submitAction(
      ctx,
      (actor) =>
        unlockOperator({ email: operator.email, comment: ctx.request.input('comment') }, actor),
      ({ wasLocked }) => {
        ctx.session.flash(
          'success',
          wasLocked
            ? `Operator ${operator.email} unlocked; they can sign in now.`
            : `Operator ${operator.email} was not locked.`
        )
        return ctx.response.redirect('/admin/operators')
      }
    )
  }
}
