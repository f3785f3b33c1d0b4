import vine from '@vinejs/vine'
import { DateTime } from 'luxon'
import Operator from '#operators/models/operator'
import { hashEnrolmentToken, isEnrolmentTokenShape } from '#operators/enrolment_link'
import { endAllSessions } from '#operators/sign_in'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const setOperatorPasswordValidator = vine.compile(
  vine.object({
    token: vine.string(),
    password: vine.string().minLength(12).maxLength(200).confirmed({
      confirmationField: 'password_confirmation',
    }),
  })
)

export const INVALID_LINK =
  'This enrolment link is not valid: it was used, replaced or has expired.'

/** The operator a valid, unexpired enrolment link belongs to, or null. */
export async function operatorOfEnrolmentLink(token: string) {
  if (!isEnrolmentTokenShape(token)) return null
  const operator = await Operator.query()
    .where('enrolment_token_hash', hashEnrolmentToken(token))
    .whereNull('disabled_at')
    .first()
  if (!operator?.enrolmentExpiresAt || operator.enrolmentExpiresAt < DateTime.utc()) return null
  return operator
}

/**
 * Sets an operator's password through their enrolment link, which then stops
 * working. Their other sessions end (a reset password must shut out whoever
 * had the old one). The second factor is untouched: a new operator enrols it
 * next; one who had it proves it at sign-in. Audited as the operator.
 */
export async function setOperatorPassword(
  input: Record<string, unknown>,
  origin: Omit<Actor, 'name'>
) {
  const data = await validateInput(setOperatorPasswordValidator, input, {
    'password.minLength': 'password must be at least 12 characters',
    'password_confirmation.confirmed': 'the two passwords differ',
  })
  const operator = await inTransaction(async (trx) => {
    const found = await operatorOfEnrolmentLink(data.token)
    if (!found) throw ActionError.general(INVALID_LINK)
    const locked = await Operator.query({ client: trx }).where('id', found.id).forUpdate().first()
    // Used meanwhile (another tab): the hash no longer matches.
    if (!locked || locked.enrolmentTokenHash !== found.enrolmentTokenHash) {
      throw ActionError.general(INVALID_LINK)
    }
    if (data.password.trim().toLowerCase() === locked.email) {
      throw ActionError.field('password', 'password must not be your email address')
    }
    locked.password = data.password // hashed by the model (AuthFinder)
    locked.enrolmentTokenHash = null
    locked.enrolmentExpiresAt = null
    await locked.useTransaction(trx).save()
    await recordAudit(
      trx,
      { ...origin, name: locked.actorName, operatorId: locked.id },
      {
        action: 'operator.set_password',
        target: { type: 'operator', id: locked.email },
        details: { via: 'enrolment_link' },
      }
    )
    return locked
  })
  await endAllSessions(operator.id)
  return operator
}
