import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvableAction } from '#approvals/approvable_actions'
import { approvalSnapshot, lockRequest, undecidableReason } from '#approvals/approval_requests'
import { approvalRequestId, assertMayDecide } from '#approvals/approval_rules'
import { clearAssignment } from '#review/assignments'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** Why a request is approved (optional for callers; the back-office form asks for one). */
export const APPROVAL_APPROVE_REASON_CODES = [
  'evidence_checked',
  'seen_on_statement',
  'bank_confirmed',
  'other',
] as const

export const approveRequestValidator = vine.compile(
  vine.object({
    approval_request_id: approvalRequestId(),
    reason_code: vine.enum(APPROVAL_APPROVE_REASON_CODES).optional(),
    comment: vine.string().trim().maxLength(1000).optional(),
  })
)

const MESSAGES = {
  'approval_request_id.required': 'approval_request_id is required',
  'approval_request_id.number': 'approval_request_id must be a request number',
}

/**
 * A second operator approves a pending request: in one transaction the
 * request is locked, the four-eyes rules are applied (an active operator
 * with the action's approver role, neither the requester nor the slip's
 * reviewer), the target is locked and its state checked again, the stored
 * action runs with its stored input as this operator (its own ledger,
 * callback, events and audit rows), and the request is marked approved with
 * the action's result. An action that would move money on a frozen order is
 * refused with who froze it (FrozenOrderRefusal): nothing is written and the
 * request stays pending, to be approved after an unfreeze (or rejected). A
 * request already decided, or past its expiry (then marked expired), is
 * refused; so is a second submit.
 */
export async function approveRequest(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ApprovalRequest> {
  const data = await validateInput(approveRequestValidator, input, MESSAGES)
  const outcome = await inTransaction(async (trx) => {
    const request = await lockRequest(trx, data.approval_request_id, 'approval_request_id')
    const refused = await undecidableReason(trx, request, undefined, actor, 'approved')
    // Commit (an expiry just recorded), then refuse.
    if (refused) return { refused, request: null }
    const entry = approvableAction(request.action)
    await assertMayDecide(trx, request, entry, actor, 'approve')

    const before = approvalSnapshot(request)
    const stored = await entry.validate(request.input)
    const spent = (error: unknown) => {
      if (!(error instanceof ActionError)) return error
      return ActionError.general(
        `approval request #${request.id} can no longer be carried out: ${error.message}; reject it`
      )
    }
    const prepared = await entry.prepare(trx, stored, actor).catch((error) => {
      throw spent(error)
    })
    // Not yet (e.g. a frozen order): its refusal is passed on as it is, and
    // the request stays pending, to be approved later or rejected.
    await entry.approvable?.(trx, prepared, request)
    const result = await entry
      .run(trx, prepared, stored, { actor, request })
      .catch((error): never => {
        throw spent(error)
      })
    const now = DateTime.utc()
    request.merge({
      status: 'approved',
      pendingKey: null,
      decidedBy: actor.operatorId,
      decidedByActor: actor.name,
      decidedAt: now,
      decisionReasonCode: data.reason_code ?? null,
      decisionComment: data.comment ?? null,
      result,
    })
    await request.useTransaction(trx).save()
    await clearAssignment(trx, 'approvals', request.id)
    await recordAudit(trx, actor, {
      action: 'approval.approve',
      target: { type: request.targetType, id: request.targetId },
      before: { status: before.status },
      after: { status: request.status },
      reason: { code: data.reason_code, comment: data.comment },
      details: {
        approval_request_id: request.id,
        kind: request.kind,
        action: request.action,
        requested_by: request.requestedByActor,
        result,
      },
    })
    return { refused: null, request }
  })
  if (outcome.refused !== null) {
    if (outcome.refused instanceof ActionError) throw outcome.refused
    throw ActionError.field('approval_request_id', outcome.refused)
  }
  return outcome.request
}
