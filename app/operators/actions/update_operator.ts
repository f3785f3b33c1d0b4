import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import { OPERATOR_ROLES } from '#operators/roles'
import { endAllSessions } from '#operators/sign_in'
import { issueEnrolmentLink } from '#operators/enrolment_link'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, onOff, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

export const updateOperatorValidator = vine.compile(
  vine.object({
    email: vine.string().trim().toLowerCase(),
    role: vine.enum(OPERATOR_ROLES).optional(),
    /** off: the operator can no longer sign in, and their sessions end. */
    enabled: vine.any().use(onOff()).optional(),
    /** on: the authenticator app and recovery codes are forgotten; the next sign-in enrols again. */
    reset_second_factor: vine.any().use(onOff()).optional(),
    /** on: the password is forgotten and a new enrolment link is issued (returned once). */
    new_link: vine.any().use(onOff()).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

function snapshot(operator: Operator) {
  return {
    role: operator.role,
    enabled: operator.disabledAt === null,
    second_factor: operator.totpEnabledAt !== null,
    password: operator.password !== null,
  }
}

/**
 * Changes an operator's role, disables or enables them, resets their second
 * factor (a lost phone) or their password (a new enrolment link, returned
 * once). Any of these ends their sessions. An operator cannot change their
 * own access.
 */
export async function updateOperator(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(updateOperatorValidator, input)
  const result = await withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const operator = await Operator.query({ client: trx })
        .where('email', data.email)
        .forUpdate()
        .first()
      if (!operator) throw ActionError.notFound('email', `no operator ${data.email}`)
      if (actor.operatorId === operator.id) {
        throw ActionError.general('you cannot change your own role or access; ask another admin')
      }
      const before = snapshot(operator)
      if (data.role !== undefined) operator.role = data.role
      if (data.enabled !== undefined) operator.disabledAt = data.enabled ? null : DateTime.utc()
      if (data.reset_second_factor) {
        operator.totpSecretEncrypted = null
        operator.totpEnabledAt = null
        operator.totpLastStep = null
        operator.recoveryCodeHashes = null
      }
      const link = data.new_link ? issueEnrolmentLink(operator) : null
      if (link) operator.password = null
      const diff = changedValues(before, snapshot(operator))
      if (diff.changed.length > 0 || link) {
        await operator.useTransaction(trx).save()
        await recordAudit(trx, actor, {
          action: 'operator.update',
          target: { type: 'operator', id: operator.email },
          before: diff.before,
          after: diff.after,
          reason: { comment: data.comment },
          details: link ? { enrolment_link_expires_at: link.expiresAt.toISO() } : undefined,
        })
      }
      return { operator, changed: diff.changed, link }
    })
  )
  const { operator, changed } = result
  if (
    changed.includes('enabled') ||
    changed.includes('second_factor') ||
    changed.includes('role') ||
    result.link
  ) {
    await endAllSessions(operator.id)
  }
  return result
}
