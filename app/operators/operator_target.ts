import type { ApprovalTarget } from '#approvals/approvable_actions'

/**
 * An operator as an approval request names it: by email, the login (an
 * account that does not exist yet has no id). The approval rules read it:
 * nobody approves a request about their own account.
 */
export function operatorTarget(email: string): ApprovalTarget {
  return { type: 'operator', id: email, amount: null, reviewedBy: null }
}
