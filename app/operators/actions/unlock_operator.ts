import vine from '@vinejs/vine'
import Operator from '#operators/models/operator'
import {
  accountFailureCount,
  accountLockedFor,
  clearAccountFailures,
} from '#operators/sign_in_limits'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { actsFromShell } from '#approvals/maker_checker'
import { recordBreakGlass } from '#notifications/notifications'
import { inTransaction } from '#core/transaction'

export const unlockOperatorValidator = vine.compile(
  vine.object({
    email: vine.string().trim().toLowerCase(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/**
 * Lifts the lock that failed sign-ins put on an operator's account (before
 * the window passes): their failures are forgotten and they can sign in at
 * once. Audited, with whether the account was locked and how many failures
 * were forgotten. The back-office's Operators page and `operator:unlock`;
 * from the server's shell it is also recorded as a break-glass use, notified
 * to every admin.
 */
export async function unlockOperator(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(unlockOperatorValidator, input)
  const operator = await Operator.findBy('email', data.email)
  if (!operator) throw ActionError.notFound('email', `no operator ${data.email}`)
  const lockedFor = await accountLockedFor(operator.email)
  const failures = await accountFailureCount(operator.email)
  await clearAccountFailures(operator.email)
  await inTransaction(async (trx) => {
    await recordAudit(trx, actor, {
      action: 'operator.unlock',
      target: { type: 'operator', id: operator.email },
      reason: { comment: data.comment },
      details: { was_locked: lockedFor > 0, failures_forgotten: failures },
    })
    if (actsFromShell(actor)) {
      await recordBreakGlass(trx, actor, {
        action: 'operator.unlock',
        summary: `unlocked operator ${operator.email} (${failures} failed sign-ins forgotten)`,
        target: { type: 'operator', id: operator.email },
      })
    }
  })
  return { operator, wasLocked: lockedFor > 0 }
}
