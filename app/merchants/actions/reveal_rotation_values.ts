import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import encryption from '@adonisjs/core/services/encryption'
import { DateTime } from 'luxon'
import { lockMerchant } from '#merchants/merchant_rules'
import { lockRotation } from '#merchants/rotation_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

export const revealRotationValuesValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    rotation_id: vine.number().withoutDecimals().positive(),
  })
)

/**
 * Returns the token and/or secret a scheduled rotation issued, ONCE: they
 * are cleared in the same transaction, so a second reveal is refused.
 * Audited (who and when, never the values).
 */
export async function revealRotationValues(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(revealRotationValuesValidator, input)
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id, { forUpdate: false })
      const rotation = await lockRotation(trx, merchant, data.rotation_id)
      if (rotation.status !== 'done') {
        throw ActionError.field(
          'rotation_id',
          `rotation ${rotation.id} is ${rotation.status}: there are no new values to reveal`
        )
      }
      if (rotation.newTokenEncrypted === null && rotation.newSecretEncrypted === null) {
        throw ActionError.field(
          'rotation_id',
          `the values of rotation ${rotation.id} were revealed at ${rotation.revealedAt?.toUTC().toISO()} by ${rotation.revealedBy}; rotate again if they are lost`
        )
      }
      const values = {
        ...(rotation.newTokenEncrypted
          ? { token: decrypt(rotation.newTokenEncrypted, rotation.id) }
          : {}),
        ...(rotation.newSecretEncrypted
          ? { secret: decrypt(rotation.newSecretEncrypted, rotation.id) }
          : {}),
      }
      rotation.merge({
        newTokenEncrypted: null,
        newSecretEncrypted: null,
        revealedAt: DateTime.utc(),
        revealedBy: actor.name,
      })
      await rotation.useTransaction(trx).save()
      await recordAudit(trx, actor, {
        action: 'merchant.credentials.reveal',
        target: { type: 'merchant', id: merchant.merchantId },
        details: { rotation_id: rotation.id, revealed: Object.keys(values) },
      })
      return { merchant, rotation, ...values }
    })
  )
}

function decrypt(ciphertext: string, rotationId: number) {
  const value = encryption.decrypt<string>(ciphertext)
  if (typeof value !== 'string') {
    // Wrong APP_KEY or a damaged row: say so rather than hand out nothing.
    throw ActionError.general(
      `the values of rotation ${rotationId} cannot be decrypted with the current APP_KEY`
    )
  }
  return value
}
