import type ApprovalRequest from '#approvals/models/approval_request'
import { requestedApprovableAction } from '#approvals/approvable_actions'
import { openApprovalRequest } from '#approvals/approval_requests'
import { ActionError } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

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
  const { action, ...fields } = input
  if (action === undefined || action === null || action === '') {
    throw ActionError.field('action', 'action is required')
  }
  const entry = requestedApprovableAction(String(action))
  const data = await entry.validate(fields)
  return inTransaction(async (trx) => {
    const prepared = await entry.prepare(trx, data, actor)
    return openApprovalRequest(trx, {
      action: String(action),
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
