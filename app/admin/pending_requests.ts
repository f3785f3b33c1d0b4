import type Operator from '#operators/models/operator'
import { decisionRights } from '#approvals/approval_rules'
import { pendingRequestsOn } from '#admin/queries/approvals'

/**
 * The live approval requests on one target (an order, a line, a platform, a
 * payout, a statement import), each with what the signed-in operator may
 * do with it (decisionRights: the rules the server applies), for the
 * admin.pendingRequests component.
 */
export async function pendingRequestsFor(operator: Operator, targetType: string, targetId: string) {
  const pending = await pendingRequestsOn(targetType, targetId)
  return pending.map((request) => ({
    ...request,
    may: decisionRights(operator, {
      requestedBy: request.requested_by_id,
      reviewedBy: request.reviewed_by_id,
      approverRole: request.approver_role,
      targetType,
      targetId,
    }),
  }))
}

/** Reason codes as select options. */
export function reasonOptions(codes: readonly string[]) {
  return codes.map((code) => ({ value: code, label: code }))
}
