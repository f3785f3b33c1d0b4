import vine from '@vinejs/vine'
import { DateTime } from 'luxon'
import { lockMerchant } from '#merchants/merchant_rules'
import { rotationSnapshot, lockRotation } from '#merchants/rotation_rules'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const cancelScheduledRotationValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    rotation_id: vine.number().withoutDecimals().positive(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/** Cancels a rotation that has not run yet. Audited. */
export async function cancelScheduledRotation(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(cancelScheduledRotationValidator, input)
  return inTransaction(async (trx) => {
    const merchant = await lockMerchant(trx, data.merchant_id, { forUpdate: false })
    const rotation = await lockRotation(trx, merchant, data.rotation_id)
    if (rotation.status !== 'scheduled') {
      throw ActionError.field(
        'rotation_id',
        `rotation ${rotation.id} is ${rotation.status}; only a scheduled one can be cancelled`
      )
    }
    const before = rotationSnapshot(rotation)
    rotation.merge({ status: 'cancelled', doneAt: DateTime.utc() })
    await rotation.useTransaction(trx).save()
    const diff = changedValues(before, rotationSnapshot(rotation))
    await recordAudit(trx, actor, {
      action: 'merchant.credentials.cancel_rotation',
      target: { type: 'merchant', id: merchant.merchantId },
      before: diff.before,
      after: diff.after,
      reason: { comment: data.comment },
      details: { rotation_id: rotation.id },
    })
    return { merchant, rotation }
  })
}
