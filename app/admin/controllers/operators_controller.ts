import type { HttpContext } from '@adonisjs/core/http'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import { createOperator } from '#operators/actions/create_operator'
import { updateOperator } from '#operators/actions/update_operator'
import { unlockOperator } from '#operators/actions/unlock_operator'
import { accountFailureCount, accountLockedFor } from '#operators/sign_in_limits'
import { formatGatewayDateTime } from '#core/clock'
import { submitAction } from '#admin/operator_action'
import { pendingRequestsFor, reasonOptions } from '#admin/pending_requests'
import { decisionRights } from '#approvals/approval_rules'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type ApprovalRequest from '#approvals/models/approval_request'
import db from '@adonisjs/lucid/services/db'
import adminConfig from '#config/admin'

const ROLE_CHOICES = [...OPERATOR_ROLES].reverse().map((role) => ({ value: role, label: role }))

const OPENED = (request: ApprovalRequest) =>
  `approval request #${request.id} opened: waits for a second admin.`

/**
 * Operators (admins only): list, invite, change a role, disable or enable,
 * reset the second factor, issue a new link for a forgotten password,
 * unlock an account locked by failed sign-ins. The same actions as the
 * operator:* commands; an admin cannot change their own access.
 *
 * What gives access (inviting an operator or an admin, raising a role,
 * re-enabling, resetting the second factor, a new link) opens an approval
 * request for a second admin, shown on this page; what takes it away is
 * immediate. No enrolment link is ever shown here: it is mailed to the
 * operator's own address.
 */
export default class OperatorsController {
  async index({ view, auth, session }: HttpContext) {
    const self = auth.user as Operator
    const operators = await Operator.query().orderBy('email')
    const locks = await Promise.all(
      operators.map(async (operator) => ({
        seconds: await accountLockedFor(operator.email),
        failures: await accountFailureCount(operator.email),
      }))
    )
    // The live requests about operators (an account asked for has no row yet).
    const targets: Array<{ target_id: string }> = await db
      .from('approval_requests')
      .where('target_type', 'operator')
      .where('status', 'pending')
      .where('expires_at', '>', new Date())
      .distinct('target_id')
      .orderBy('target_id')
    const pending = (
      await Promise.all(
        targets.map(async ({ target_id: email }) =>
          (await pendingRequestsFor(self, 'operator', email)).map((request) => ({
            ...request,
            // The page knows the target: nobody approves a request about their own account.
            may: decisionRights(self, {
              requestedBy: request.requested_by_id,
              reviewedBy: request.reviewed_by_id,
              approverRole: request.approver_role,
              targetType: 'operator',
              targetId: email,
            }),
          }))
        )
      )
    )
      .flat()
      .sort((a, b) => a.id - b.id)
    return view.render('admin/operators/index', {
      roles: ROLE_CHOICES,
      self: self.id,
      mailed: session.flashMessages.get('enrolment_mailed'),
      linkHours: adminConfig.enrolmentLinkHours,
      pending,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/operators',
      approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
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
          ctx.request.only(['email', 'name', 'role', 'comment']) as Record<string, unknown>,
          actor
        ),
      ({ operator, request, mailedTo }) => {
        if (request) {
          ctx.session.flash(
            'success',
            `${ctx.request.input('email', '').trim().toLowerCase()}: ${OPENED(request)} The account is created when another admin approves it; the enrolment link is then mailed to that address.`
          )
        } else if (operator) {
          ctx.session.flash('success', `Operator ${operator.email} (${operator.role}) created.`)
          if (mailedTo) ctx.session.flash('enrolment_mailed', mailedTo)
        }
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
      ({ changed, requests }) => {
        if (requests.length > 0) {
          ctx.session.flash(
            'success',
            `${operator.email}: ${requests.map(OPENED).join(' ')}` +
              (change === 'new_link'
                ? ' On approval the new enrolment link is mailed to that address.'
                : '')
          )
        } else {
          ctx.session.flash(
            'success',
            changed.length > 0
              ? `Operator ${operator.email}: ${changed.join(', ')} changed; their sessions ended.`
              : 'Nothing changed.'
          )
        }
        return ctx.response.redirect('/admin/operators')
      },
      // The row's forms show no error beside a field: every refusal goes on top.
      { formFields: [] }
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
