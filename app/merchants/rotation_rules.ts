import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { DateTime } from 'luxon'
import MerchantCredential from '#merchants/models/merchant_credential'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type Merchant from '#merchants/models/merchant'
import { GATEWAY_ZONE } from '#core/clock'
import { ActionError } from '#core/validation'

/**
 * A future time: ISO 8601 with an offset (2030-01-31T02:00:00+07:00, ...Z)
 * or without one, read as Bangkok time like every time operators type.
 * Becomes a UTC DateTime in whole seconds, as the database keeps it: the
 * delayed job then never wakes before the stored time.
 */
export const futureTime = vine.createRule((value, _options, field: FieldContext) => {
  const parsed =
    value instanceof Date
      ? DateTime.fromJSDate(value)
      : DateTime.fromISO(String(value).trim(), { zone: GATEWAY_ZONE })
  const time = parsed.startOf('second')
  if (!time.isValid) {
    return field.report(
      `${field.name} must be an ISO 8601 time such as 2030-01-31T02:00:00+07:00 (without an offset: Bangkok time)`,
      'iso_time',
      field
    )
  }
  if (time <= DateTime.now()) {
    return field.report(`${field.name} must be in the future`, 'future', field)
  }
  field.mutate(time.toUTC(), field)
})

/** A scheduled rotation as the audit log and the merchant page show it (never the values). */
export function rotationSnapshot(rotation: ScheduledCredentialRotation) {
  const iso = (time: DateTime | null) => time?.toUTC().toISO() ?? null
  return {
    id: rotation.id,
    token: rotation.rotateToken,
    secret: rotation.rotateSecret,
    grace_seconds: rotation.graceSeconds,
    run_at: iso(rotation.runAt),
    status: rotation.status,
    requested_by: rotation.requestedBy,
    comment: rotation.comment,
    done_at: iso(rotation.doneAt),
    failure: rotation.failure,
    credential_id: rotation.credentialId,
    previous_valid_until: iso(rotation.previousValidUntil),
    /** Rotations revealed before new values were handed over once to their requester. */
    revealed_at: iso(rotation.revealedAt),
    revealed_by: rotation.revealedBy,
  }
}

/** The merchant's scheduled rotations, newest first (the merchant page). */
export async function rotationsOf(merchantId: number, limit = 50) {
  const rotations = await ScheduledCredentialRotation.query()
    .where('merchant_id', merchantId)
    .orderBy('id', 'desc')
    .limit(limit)
  return rotations.map(rotationSnapshot)
}

/**
 * The merchant's credentials, newest first: current, in grace until a time,
 * or revoked (expired and not yet revoked by the worker: "expired").
 */
export async function credentialsOf(merchantId: number, limit = 20) {
  const credentials = await MerchantCredential.query()
    .where('merchant_id', merchantId)
    .orderBy('id', 'desc')
    .limit(limit)
  const now = DateTime.now()
  return credentials.map((credential) => ({
    id: credential.id,
    token_hint: credential.tokenHint,
    created_at: credential.createdAt.toUTC().toISO(),
    state: credential.revokedAt
      ? 'revoked'
      : !credential.expiresAt
        ? 'current'
        : credential.expiresAt > now
          ? 'grace'
          : 'expired',
    expires_at: credential.expiresAt?.toUTC().toISO() ?? null,
    revoked_at: credential.revokedAt?.toUTC().toISO() ?? null,
  }))
}

/**
 * A merchant's scheduled rotation, locked for the caller's transaction, or a
 * not-found refusal naming the field (a rotation of another merchant is not
 * found either).
 */
export async function lockRotation(
  trx: TransactionClientContract,
  merchant: Merchant,
  rotationId: number
) {
  const rotation = await ScheduledCredentialRotation.query({ client: trx })
    .where('id', rotationId)
    .where('merchant_id', merchant.id)
    .forUpdate()
    .first()
  if (!rotation) {
    throw ActionError.notFound(
      'rotation_id',
      `no scheduled rotation ${rotationId} for merchant ${merchant.merchantId}`
    )
  }
  return rotation
}
