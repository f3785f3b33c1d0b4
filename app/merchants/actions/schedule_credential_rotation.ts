import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { MERCHANT_MESSAGES, lockMerchant } from '#merchants/merchant_rules'
import { futureTime, rotationSnapshot } from '#merchants/rotation_rules'
import { rotationFields, rotationOf } from '#merchants/actions/rotate_credentials'
import { recordAudit } from '#core/audit'
import { dispatch } from '#core/queue/queue_manager'
import { validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

export const scheduleCredentialRotationValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    /** When the worker rotates: an ISO 8601 time in the future. */
    run_at: vine.any().use(futureTime()),
    ...rotationFields,
  })
)

/**
 * Schedules a rotation of the merchant's token and/or secret for `run_at`;
 * the worker carries it out (perform_scheduled_rotation) and keeps the new
 * values encrypted until an operator reveals them once. Audited.
 */
export async function scheduleCredentialRotation(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(scheduleCredentialRotationValidator, input, MERCHANT_MESSAGES)
  const rotation = rotationOf(data)
  const scheduled = await withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id, { forUpdate: false })
      const row = await ScheduledCredentialRotation.create(
        {
          merchantId: merchant.id,
          rotateToken: rotation.token,
          rotateSecret: rotation.secret,
          graceSeconds: rotation.graceSeconds,
          runAt: data.run_at,
          status: 'scheduled',
          requestedBy: actor.name,
          requestedByOperatorId: actor.operatorId ?? null,
          comment: data.comment ?? null,
        },
        { client: trx }
      )
      await recordAudit(trx, actor, {
        action: 'merchant.credentials.schedule_rotation',
        target: { type: 'merchant', id: merchant.merchantId },
        after: rotationSnapshot(row),
        reason: { comment: data.comment },
      })
      return { merchant, rotation: row }
    })
  )
  await enqueueRotation(scheduled.rotation)
  return scheduled
}

/**
 * A delayed job that runs the rotation at its run_at (job id from the
 * rotation row: adding it twice is harmless). If Redis is unreachable the
 * rotation still runs: the credentials sweep performs due rotations.
 */
export async function enqueueRotation(rotation: ScheduledCredentialRotation) {
  try {
    await dispatch(
      'performCredentialRotation',
      { rotationId: rotation.id },
      {
        delay: Math.max(0, rotation.runAt.toMillis() - Date.now()),
        // The creation time makes the id unique even where row ids are
        // reused (a restored or reset database) and completed jobs remain.
        jobId: `rotation-${rotation.id}-${rotation.createdAt.toUnixInteger()}`,
      }
    )
  } catch (error) {
    logger.warn(
      { err: error, rotation_id: rotation.id },
      'rotation job not added; the credentials sweep will perform it'
    )
  }
}
