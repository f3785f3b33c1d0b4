import { expireDueApprovalRequests } from '#approvals/approval_requests'

/** approvals.sweep-expired — idempotent: only pending requests past their expiry are touched. */
export default async function sweepApprovalRequestsJob() {
  return { expired: await expireDueApprovalRequests() }
}
