import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import Operator from '#operators/models/operator'
import {
  decryptTotpSecret,
  encryptTotpSecret,
  hashRecoveryCode,
  newRecoveryCodes,
  verifyTotp,
} from '#operators/totp'
import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** Where the request came from, for the audit rows of a sign-in. */
export type RequestOrigin = Pick<Actor, 'ip' | 'requestId'>

function operatorActor(operator: Operator, origin: RequestOrigin): Actor {
  return { name: operator.actorName, operatorId: operator.id, ...origin }
}

/**
 * The first step of a sign-in: email and password. Null for an unknown
 * email, a wrong password or a disabled operator (one answer for all, and the
 * password is hashed even for an unknown email, so timing tells nothing).
 */
export async function checkPassword(email: string, password: string) {
  try {
    const operator = await Operator.verifyCredentials(email.trim().toLowerCase(), password)
    return operator.disabledAt ? null : operator
  } catch {
    return null
  }
}

/**
 * The second step: a TOTP code (each time step works once) or a recovery
 * code (each works once), checked under the operator's row lock so that two
 * requests cannot both use one code. Returns how the operator proved it,
 * 'reused' for a TOTP code of a time step already used (the operator waits
 * for the next code), or null (wrong or expired).
 */
export async function checkSecondFactor(
  operatorId: number,
  code: string
): Promise<'totp' | 'recovery_code' | 'reused' | null> {
  return inTransaction(async (trx) => {
    const operator = await Operator.query({ client: trx })
      .where('id', operatorId)
      .forUpdate()
      .first()
    if (!operator?.totpSecretEncrypted || operator.disabledAt) return null

    const step = verifyTotp(decryptTotpSecret(operator.totpSecretEncrypted), code)
    if (step !== null) {
      if (operator.totpLastStep !== null && step <= operator.totpLastStep) return 'reused'
      operator.totpLastStep = step
      await operator.useTransaction(trx).save()
      return 'totp'
    }

    const hashes = operator.recoveryCodeHashes ?? []
    const hashed = hashRecoveryCode(code)
    if (!hashes.includes(hashed)) return null
    operator.recoveryCodeHashes = hashes.filter((hash) => hash !== hashed)
    await operator.useTransaction(trx).save()
    return 'recovery_code'
  })
}

/**
 * Enrols the second factor: the code typed proves the authenticator app holds
 * `secret`. Returns the recovery codes, to be shown once, or null when the
 * code is wrong. Audited.
 */
export async function enrolTotp(
  operatorId: number,
  secret: string,
  code: string,
  origin: RequestOrigin
) {
  const step = verifyTotp(secret, code)
  if (step === null) return null
  return inTransaction(async (trx) => {
    const operator = await Operator.query({ client: trx })
      .where('id', operatorId)
      .forUpdate()
      .firstOrFail()
    if (operator.totpEnabledAt) return null // enrolled meanwhile, in another tab
    const codes = newRecoveryCodes()
    operator.totpSecretEncrypted = encryptTotpSecret(secret)
    operator.totpEnabledAt = DateTime.utc()
    operator.totpLastStep = step
    operator.recoveryCodeHashes = codes.map(hashRecoveryCode)
    await operator.useTransaction(trx).save()
    await recordAudit(trx, operatorActor(operator, origin), {
      action: 'operator.totp_enrol',
      target: { type: 'operator', id: operator.email },
    })
    return codes
  })
}

/** Records a completed sign-in (and how the second factor was proven). */
export async function recordSignIn(
  operator: Operator,
  method: 'totp' | 'recovery_code' | 'enrolment',
  origin: RequestOrigin
) {
  await inTransaction(async (trx) => {
    await trx.from('operators').where('id', operator.id).update({ last_login_at: new Date() })
    await recordAudit(trx, operatorActor(operator, origin), {
      action: 'operator.login',
      target: { type: 'operator', id: operator.email },
      details: { second_factor: method },
    })
  })
}

/** Records a refused sign-in step; `email` is what was typed (the operator may not exist). */
export async function recordFailedSignIn(
  email: string,
  step: 'password' | 'second_factor' | 'second_factor_reused' | 'rate_limited',
  origin: RequestOrigin
) {
  await inTransaction(async (trx) => {
    await recordAudit(
      trx,
      { name: `login:${email.slice(0, 100)}`, ...origin },
      {
        action: 'operator.login_failed',
        target: { type: 'operator', id: email.slice(0, 64) },
        details: { step },
      }
    )
  })
}

/** Records a logout; `everywhere`: every session of the operator was ended. */
export async function recordSignOut(
  operator: Operator,
  everywhere: boolean,
  origin: RequestOrigin
) {
  await inTransaction(async (trx) => {
    await recordAudit(trx, operatorActor(operator, origin), {
      action: everywhere ? 'operator.logout_everywhere' : 'operator.logout',
      target: { type: 'operator', id: operator.email },
    })
  })
}

/** Ends every back-office session of the operator (sessions are tagged with the operator's id). */
export async function endAllSessions(operatorId: number) {
  await db.from('sessions').where('user_id', String(operatorId)).delete()
}
