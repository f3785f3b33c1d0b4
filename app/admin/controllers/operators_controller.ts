import type { HttpContext } from '@adonisjs/core/http'
import Operator from '#operators/models/operator'
import { createOperator } from '#operators/actions/create_operator'
import { updateOperator } from '#operators/actions/update_operator'
import { unlockOperator } from '#operators/actions/unlock_operator'
import { submitAction } from '#admin/operator_action'
import { reasonOptions } from '#admin/pending_requests'
import { ROLE_CHOICES, operatorsPage } from '#admin/views/operators'
import { APPROVAL_APPROVE_REASON_CODES } from '#approvals/actions/approve_request'
import { APPROVAL_REJECT_REASON_CODES } from '#approvals/actions/reject_request'
import type ApprovalRequest from '#approvals/models/approval_request'
import adminConfig from '#config/admin'

const OPENED = (request: ApprovalRequest) =>
  `approval request #${request.id} opened: waits for a second admin.`

/** A row form's change as update_operator's input: the one setting the form changes. */
function changeInput(ctx: HttpContext, email: string, change: string) {
  const input: Record<string, unknown> = { email, comment: ctx.request.input('comment') }
  if (change === 'role') input.role = ctx.request.input('role')
  if (change === 'disable') input.enabled = 'off'
  if (change === 'enable') input.enabled = 'on'
  if (change === 'reset_second_factor') input.reset_second_factor = 'on'
  if (change === 'new_link') input.new_link = 'on'
  return input
}

/** What the page says after a row's change: the requests opened, or what changed. */
function updatedMessage(
  email: string,
  change: string,
  { changed, requests }: { changed: string[]; requests: ApprovalRequest[] }
) {
  if (requests.length > 0) {
    return (
      `${email}: ${requests.map(OPENED).join(' ')}` +
      (change === 'new_link'
        ? ' On approval the new enrolment link is mailed to that address.'
        : '')
    )
  }
  return changed.length > 0
    ? `Operator ${email}: ${changed.join(', ')} changed; their sessions ended.`
    : 'Nothing changed.'
}

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
    return view.render('admin/operators/index', {
      ...(await operatorsPage(self)),
      roles: ROLE_CHOICES,
      self: self.id,
      mailed: session.flashMessages.get('enrolment_mailed'),
      linkHours: adminConfig.enrolmentLinkHours,
      refusal: session.flashMessages.get('actionRefusal') ?? null,
      back: '/admin/operators',
      approveCodes: reasonOptions(APPROVAL_APPROVE_REASON_CODES),
      rejectCodes: reasonOptions(APPROVAL_REJECT_REASON_CODES),
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
    return submitAction(
      ctx,
      (actor) => updateOperator(changeInput(ctx, operator.email, change), actor),
      (result) => {
        ctx.session.flash('success', updatedMessage(operator.email, change, result))
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
