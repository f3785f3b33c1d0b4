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
 * Whether `actor` may approve or reject `request`: a signed-in, active
 * operator with the action's approver role. Approving also needs a second
 * person: neither the operator who asked nor the one who reviewed the slip
 * behind the request. The requester may reject (withdraw) their own request.
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
  return operator
}

/**
 * What `operator` may do with a pending request, for the pages that show
 * its buttons (the same rules as assertMayDecide, which the actions apply on
 * the server): approve with the approver role unless they asked for it or
 * reviewed its slip; reject with the approver role, or withdraw their own.
 */
export function decisionRights(
  operator: Pick<Operator, 'id' | 'role' | 'disabledAt'>,
  request: { requestedBy: number | null; reviewedBy: number | null; approverRole: OperatorRole }
) {
  const active = !operator.disabledAt
  const own = request.requestedBy === operator.id
  const approver = active && hasRole(operator, request.approverRole)
  return {
    own,
    approve: approver && !own && request.reviewedBy !== operator.id,
    reject: active && (approver || own),
  }
}
