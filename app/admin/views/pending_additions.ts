import type Operator from '#operators/models/operator'
import { pendingRequestsFor } from '#admin/pending_requests'

/**
 * The requests waiting on each of these targets (each target once, in the
 * order given), with what the operator may do with them, oldest first.
 */
export async function pendingRequestsOnTargets(
  operator: Operator,
  targetType: string,
  targetIds: Iterable<string>
) {
  const requests = []
  for (const targetId of new Set(targetIds)) {
    requests.push(...(await pendingRequestsFor(operator, targetType, targetId)))
  }
  return requests.sort((a, b) => a.id - b.id)
}
