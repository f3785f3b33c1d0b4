import vine from '@vinejs/vine'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvableAction } from '#approvals/approvable_actions'
import { closeRequest, lockRequest, undecidableReason } from '#approvals/approval_requests'
import { approvalRequestId, assertMayDecide } from '#approvals/approval_rules'
import { clearAssignment } from '#review/assignments'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** Why a request is turned down. */
export const APPROVAL_REJECT_REASON_CODES = [
  'insufficient_evidence',
  'wrong_target',
  'wrong_amount',
  'duplicate',
  'withdrawn',
  'other',
] as const

export const rejectRequestValidator = vine.compile(
  vine.object({
    approval_request_id: approvalRequestId(),
    reason_code: vine.enum(APPROVAL_REJECT_REASON_CODES),
    comment: vine.string().trim().minLength(1).maxLength(1000),
  })
)

const MESSAGES = {
  'approval_request_id.required': 'approval_request_id is required',
  'approval_request_id.number': 'approval_request_id must be a request number',
  'reason_code.required': `reason_code is required: one of ${APPROVAL_REJECT_REASON_CODES.join(', ')}`,
  'comment.required': 'comment is required: say why the request is turned down',
}

/**
 * An operator turns a pending request down (the requester may withdraw
 * their own): nothing is run, the request is marked rejected with the
 * reason, and what it held is released (an order waiting on it is no longer
 * under review unless a slip still is). A request already decided or past
 * its expiry is refused; so is a second submit.
 */
export async function rejectRequest(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ApprovalRequest> {
  const data = await validateInput(rejectRequestValidator, input, MESSAGES)
  const outcome = await inTransaction(async (trx) => {
    const request = await lockRequest(trx, data.approval_request_id, 'approval_request_id')
    const refused = await undecidableReason(trx, request, undefined, actor, 'rejected')
    if (refused) return { refused, request: null }
    await assertMayDecide(trx, request, approvableAction(request.action), actor, 'reject')
    await closeRequest(trx, request, 'rejected', actor, {
      code: data.reason_code,
      comment: data.comment,
    })
    await clearAssignment(trx, 'approvals', request.id)
    return { refused: null, request }
  })
  if (outcome.refused !== null) {
    if (outcome.refused instanceof ActionError) throw outcome.refused
    throw ActionError.field('approval_request_id', outcome.refused)
  }
  return outcome.request
}
