import vine from '@vinejs/vine'
import type ApprovalRequest from '#approvals/models/approval_request'
import { requestedApprovableAction } from '#approvals/approvable_actions'
import { openApprovalRequest } from '#approvals/approval_requests'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** The registry's entry asked for; the other fields are checked by that entry's schema. */
export const requestApprovalValidator = vine.compile(vine.object({ action: vine.string() }))

/**
 * An operator asks a second operator to approve an action instead of running
 * it: `action` names the registry's entry (e.g. "payment.mark_paid") and the
 * other fields are that action's own input, validated by its schema (so the
 * messages name the same fields as the action's form). The target is locked
 * and its state checked now, and again on approval. Refused while a request
 * of the same kind on the same target is pending.
 *
 * The actions that need four eyes open their requests themselves (marking a
 * payment paid above the platform's threshold, switching deposits back on);
 * this is the same step on its own, for a decision an operator wants checked.
 */
export async function requestApproval(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ApprovalRequest> {
  const { action } = await validateInput(requestApprovalValidator, input)
  const fields = Object.fromEntries(Object.entries(input).filter(([key]) => key !== 'action'))
  const entry = requestedApprovableAction(action)
  const data = await entry.validate(fields)
  return inTransaction(async (trx) => {
    const prepared = await entry.prepare(trx, data, actor)
    return openApprovalRequest(trx, {
      action,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      reason: {
        code: typeof data.reason_code === 'string' ? data.reason_code : null,
        comment: typeof data.comment === 'string' ? data.comment : null,
      },
    })
  })
}
