import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import { accountFailureCount, accountLockedFor } from '#operators/sign_in_limits'
import { formatGatewayDateTime } from '#core/clock'
import { liveRequestTargets } from '#admin/queries/pending_targets'
import { pendingRequestsOnTargets } from '#admin/views/pending_additions'

export const ROLE_CHOICES = [...OPERATOR_ROLES]
  .reverse()
  .map((role) => ({ value: role, label: role }))

/** One operator as the list shows them, with the lock failed sign-ins put on the account. */
async function operatorRow(operator: Operator) {
  const lockedSeconds = await accountLockedFor(operator.email)
  return {
    id: operator.id,
    email: operator.email,
    name: operator.name,
    role: operator.role,
    enabled: operator.disabledAt === null,
    password: operator.password !== null,
    link_expires: formatGatewayDateTime(operator.enrolmentExpiresAt),
    second_factor: operator.totpEnabledAt !== null,
    last_login: formatGatewayDateTime(operator.lastLoginAt),
    locked_minutes: lockedSeconds > 0 ? Math.ceil(lockedSeconds / 60) : 0,
    failures: await accountFailureCount(operator.email),
  }
}

/**
 * The operators page: every operator by email, and the live requests about
 * operators (an account asked for has no row yet), each with what `self`
 * may do with it (nobody approves a request about their own account).
 */
export async function operatorsPage(self: Operator) {
  const operators = await Operator.query().orderBy('email')
  const targets = (await liveRequestTargets(['operator'])).map((row) => row.targetId)
  return {
    operators: await Promise.all(operators.map(operatorRow)),
    pending: await pendingRequestsOnTargets(self, 'operator', targets.sort()),
  }
}
