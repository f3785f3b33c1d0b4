import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import gateway from '#config/gateway'
import type Merchant from '#merchants/models/merchant'
import { replaceCredentials, type Replacement } from '#merchants/credentials'
import {
  MAX_GRACE_SECONDS,
  MERCHANT_MESSAGES,
  lockMerchant,
  wholeNumber,
} from '#merchants/merchant_rules'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { recordAudit, type Reason } from '#core/audit'
import { ActionError, onOff, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

/** Which credentials to rotate and for how long the previous ones keep working. */
export const rotationFields = {
  token: vine.any().use(onOff()).optional(),
  secret: vine.any().use(onOff()).optional(),
  /** Default CREDENTIAL_GRACE_SECONDS; 0 revokes the previous credentials at once (a leak). */
  grace_seconds: wholeNumber([0, MAX_GRACE_SECONDS]).optional(),
  comment: vine.string().trim().maxLength(500).optional(),
}

export const rotateCredentialsValidator = vine.compile(
  vine.object({ merchant_id: vine.string().trim(), ...rotationFields })
)

/** The rotation asked for: at least one of token and secret, and its grace period. */
export function rotationOf(data: { token?: boolean; secret?: boolean; grace_seconds?: number }) {
  if (!data.token && !data.secret) {
    throw ActionError.field('token', 'choose what to rotate: token, secret or both')
  }
  return {
    token: !!data.token,
    secret: !!data.secret,
    graceSeconds: data.grace_seconds ?? gateway.credentialGraceSeconds,
  }
}

/**
 * Replaces the merchant's token and/or secret now. Returns the new values
 * ONCE (only a hash and a ciphertext are kept) and when the previous
 * credentials stop working. Audited without the values.
 */
export async function rotateCredentials(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(rotateCredentialsValidator, input, MERCHANT_MESSAGES)
  const rotation = rotationOf(data)
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id)
      const replacement = await replaceCredentials(trx, merchant, rotation)
      await merchantAuthChanged(trx, merchant.merchantId)
      await auditRotation(trx, actor, merchant, replacement, { comment: data.comment })
      return {
        merchant,
        ...replacement.issued,
        grace_seconds: rotation.graceSeconds,
        previous_valid_until: replacement.previousValidUntil,
      }
    })
  )
}

/** The audit row of a rotation, now or scheduled: which credential replaced which, never the values. */
export async function auditRotation(
  trx: TransactionClientContract,
  actor: Actor,
  merchant: Merchant,
  { issued, credential, previous, graceSeconds, previousValidUntil }: Replacement,
  reason: Reason,
  details: Record<string, unknown> = {}
) {
  await recordAudit(trx, actor, {
    action: 'merchant.credentials.rotate',
    target: { type: 'merchant', id: merchant.merchantId },
    before: { credential_id: previous.id, token_hint: previous.tokenHint },
    after: { credential_id: credential.id, token_hint: credential.tokenHint },
    reason,
    details: {
      token_rotated: issued.token !== undefined,
      secret_rotated: issued.secret !== undefined,
      grace_seconds: graceSeconds,
      previous_valid_until: previousValidUntil.toISO(),
      ...details,
    },
  })
}
