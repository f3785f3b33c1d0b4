import { DateTime } from 'luxon'
import Merchant from '#merchants/models/merchant'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { CredentialError, replaceCredentials, storeHandover } from '#merchants/credentials'
import { rotationSnapshot } from '#merchants/rotation_rules'
import { auditRotation } from '#merchants/actions/rotate_credentials'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { changedValues, recordAudit } from '#core/audit'
import { SYSTEM } from '#core/actor'
import { inTransaction } from '#core/transaction'

/**
 * Carries out a scheduled rotation that is due: the same replacement as
 * rotate_credentials, the new values kept encrypted for one view by the
 * operator who scheduled it (credential_handovers; the shell's for one
 * scheduled from the server). Idempotent: a rotation that is no longer scheduled
 * (done, cancelled, failed) or not yet due is left alone, and the row lock
 * makes a second job wait and then find it done. A merchant whose credentials
 * cannot be used (no current one, a secret APP_KEY cannot decrypt) makes it
 * failed; other errors (the database away) leave it scheduled for a retry.
 * Returns whether this call rotated.
 */
export async function performScheduledRotation(rotationId: number, now = DateTime.utc()) {
  return inTransaction(async (trx) => {
    const rotation = await ScheduledCredentialRotation.query({ client: trx })
      .where('id', rotationId)
      .forUpdate()
      .first()
    if (!rotation || rotation.status !== 'scheduled' || rotation.runAt > now) return false
    const merchant = await Merchant.findOrFail(rotation.merchantId, { client: trx })
    const before = rotationSnapshot(rotation)

    let replacement
    try {
      // A savepoint: a refused replacement leaves nothing behind but the failure.
      replacement = await trx.transaction((savepoint) =>
        replaceCredentials(savepoint, merchant, {
          token: rotation.rotateToken,
          secret: rotation.rotateSecret,
          graceSeconds: rotation.graceSeconds,
        })
      )
    } catch (error) {
      if (!(error instanceof CredentialError)) throw error
      rotation.merge({ status: 'failed', doneAt: now, failure: error.message.slice(0, 255) })
      await rotation.useTransaction(trx).save()
      const diff = changedValues(before, rotationSnapshot(rotation))
      await recordAudit(trx, SYSTEM, {
        action: 'merchant.credentials.rotation_failed',
        target: { type: 'merchant', id: merchant.merchantId },
        before: diff.before,
        after: diff.after,
        details: { rotation_id: rotation.id },
      })
      return false
    }

    // On the outer transaction: the savepoint's commit is not the real one.
    await merchantAuthChanged(trx, merchant.merchantId)
    rotation.merge({
      status: 'done',
      doneAt: now,
      credentialId: replacement.credential.id,
      previousValidUntil: replacement.previousValidUntil,
    })
    await rotation.useTransaction(trx).save()
    const handoverId = await storeHandover(trx, merchant, replacement, {
      operatorId: rotation.requestedByOperatorId,
      requestedBy: rotation.requestedBy,
      rotationId: rotation.id,
    })
    await auditRotation(
      trx,
      SYSTEM,
      merchant,
      replacement,
      { comment: rotation.comment },
      { rotation_id: rotation.id, requested_by: rotation.requestedBy, handover_id: handoverId }
    )
    return true
  })
}

/**
 * Performs every due scheduled rotation (the safety net for a delayed job
 * lost with Redis). Returns how many this call rotated.
 */
export async function performDueRotations(now = DateTime.utc(), batch = 100) {
  const due = await ScheduledCredentialRotation.query()
    .where('status', 'scheduled')
    .where('run_at', '<=', now.toJSDate())
    .orderBy('run_at')
    .limit(batch)
    .select('id')
  let rotated = 0
  for (const { id } of due) if (await performScheduledRotation(id, now)) rotated++
  return rotated
}
