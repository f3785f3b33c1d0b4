import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { isDuplicateKey, withDeadlockRetry } from '#core/db_retry'
import { issueEnrolmentLink } from '#operators/enrolment_link'
import type { Actor } from '#core/actor'

export const createOperatorValidator = vine.compile(
  vine.object({
    email: vine.string().trim().toLowerCase().email().maxLength(191),
    name: vine.string().trim().minLength(1).maxLength(120).optional(),
    role: vine.enum(OPERATOR_ROLES),
  })
)

/**
 * Creates an operator without a password, and the one-time enrolment link
 * through which they choose it (returned once; only its hash is stored). The
 * second factor is enrolled right after, for every role.
 */
export async function createOperator(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(createOperatorValidator, input, {
    'email.email': 'email must be an email address',
  })
  try {
    return await withDeadlockRetry(() =>
      db.transaction(async (trx) => {
        const operator = new Operator().merge({
          email: data.email,
          name: data.name ?? data.email.split('@')[0],
          role: data.role,
          password: null,
        })
        const link = issueEnrolmentLink(operator)
        await operator.useTransaction(trx).save()
        await recordAudit(trx, actor, {
          action: 'operator.create',
          target: { type: 'operator', id: operator.email },
          after: { email: operator.email, name: operator.name, role: operator.role },
          details: { enrolment_link_expires_at: link.expiresAt.toISO() },
        })
        return { operator, link }
      })
    )
  } catch (error) {
    if (isDuplicateKey(error)) {
      throw ActionError.field('email', `an operator with email ${data.email} already exists`)
    }
    throw error
  }
}
