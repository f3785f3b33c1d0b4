import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import vine from '@vinejs/vine'
import Operator from '#operators/models/operator'
import { hasRole } from '#operators/roles'
import type ApprovalRequest from '#approvals/models/approval_request'
import type { ApprovableAction } from '#approvals/approvable_actions'
import { ActionError } from '#core/validation'
import type { Actor } from '#core/actor'
import type { OperatorRole } from '#operators/roles'

/** The request an approve or reject form names. */
export const approvalRequestId = () => vine.number().withoutDecimals().min(1)

/**
 * How the requester made `approver` what they are, or null: nobody approves
 * a request through an account the requester created, raised or
 * re-enabled (docs/decisions.md, "Four eyes: operators"), whatever the
 * request is about.
 */
export function madeByRequester(
  approver: Partial<Pick<Operator, 'createdBy' | 'raisedBy' | 'enabledBy'>>,
  requestedBy: number | null
) {
  if (requestedBy === null) return null
  if (approver.createdBy === requestedBy) return 'created'
  if (approver.raisedBy === requestedBy) return 'raised'
  if (approver.enabledBy === requestedBy) return 're-enabled'
  return null
}

/** Whether the request is about `approver`'s own account (an operator is named by email). */
export function aboutOwnAccount(
  approver: Partial<Pick<Operator, 'email'>>,
  request: { targetType?: string | null; targetId?: string | null }
) {
  return (
    request.targetType === 'operator' &&
    approver.email !== undefined &&
    request.targetId === approver.email
  )
}

/**
 * Whether `actor` may approve or reject `request`: a signed-in, active
 * operator with the action's approver role. Approving also needs a second
 * person: neither the operator who asked nor the one who reviewed the slip
 * behind the request, nor an operator whose account the requester created,
 * raised or re-enabled; and nobody approves a request about their own
 * account. The requester may reject (withdraw) their own request.
 */
export async function assertMayDecide(
  trx: TransactionClientContract,
  request: ApprovalRequest,
  entry: ApprovableAction,
  actor: Actor,
  decision: 'approve' | 'reject'
) {
  if (actor.operatorId === undefined || actor.operatorId === null) {
    throw ActionError.general(`only a signed-in operator can ${decision} an approval request`)
  }
  const operator = await Operator.find(actor.operatorId, { client: trx })
  if (!operator || operator.disabledAt !== null) {
    throw ActionError.general('this operator account is disabled')
  }
  const isRequester = request.requestedBy === operator.id
  if (decision === 'reject' && isRequester) return operator
  if (!hasRole(operator, entry.approverRole)) {
    throw ActionError.general(
      `deciding on "${request.kind}" requests needs the ${entry.approverRole} role`
    )
  }
  if (decision === 'approve' && isRequester) {
    throw ActionError.general(
      `you asked for approval request #${request.id}: another operator must approve it`
    )
  }
  if (decision === 'approve' && request.reviewedBy === operator.id) {
    throw ActionError.general(
      `you reviewed the slip behind approval request #${request.id}: another operator must approve it`
    )
  }
  if (decision === 'approve' && aboutOwnAccount(operator, request)) {
    throw ActionError.general(
      `approval request #${request.id} is about your own account: another admin must approve it`
    )
  }
  const made = decision === 'approve' ? madeByRequester(operator, request.requestedBy) : null
  if (made) {
    throw ActionError.general(
      `your account was ${made} by ${request.requestedByActor.replace(/^operator:/, '')}, who asked for approval request #${request.id}: ` +
        `an operator whose account they did not create, raise or re-enable must approve it`
    )
  }
  return operator
}

/**
 * What `operator` may do with a pending request, for the pages that show
 * its buttons (the same rules as assertMayDecide, which the actions apply on
 * the server): approve with the approver role unless they asked for it,
 * reviewed its slip, their account was created, raised or re-enabled by the
 * requester, or it is about their own account (when the caller names the
 * target); reject with the approver role, or withdraw their own.
 */
export function decisionRights(
  operator: Pick<Operator, 'id' | 'role' | 'disabledAt'> &
    Partial<Pick<Operator, 'email' | 'createdBy' | 'raisedBy' | 'enabledBy'>>,
  request: {
    requestedBy: number | null
    reviewedBy: number | null
    approverRole: OperatorRole
    targetType?: string | null
    targetId?: string | null
  }
) {
  const active = !operator.disabledAt
  const own = request.requestedBy === operator.id
  const approver = active && hasRole(operator, request.approverRole)
  return {
    own,
    approve:
      approver &&
      !own &&
      request.reviewedBy !== operator.id &&
      madeByRequester(operator, request.requestedBy) === null &&
      !aboutOwnAccount(operator, request),
    reject: active && (approver || own),
  }
}
