import {
  createHash,
  createHmac,
  createSecretKey,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto'
import { DateTime } from 'luxon'
import encryption from '@adonisjs/core/services/encryption'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import MerchantCredential from '#merchants/models/merchant_credential'
import type Merchant from '#merchants/models/merchant'
import { randomString } from '#core/random'

export const TOKEN_LENGTH = 40
export const SECRET_LENGTH = 48

export interface IssuedCredentials {
  token: string
  secret: string
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** Lowercase hex HMAC-SHA256 of the exact bytes, as merchants sign requests. */
export function signBody(secret: string | KeyObject, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** A secret as a ready HMAC key: made once, not on every signature. */
export function hmacKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'))
}

/** Constant-time equality of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  return left.length === right.length && timingSafeEqual(left, right)
}

export function decryptSecret(
  credential: Pick<MerchantCredential, 'id' | 'secretEncrypted'>
): string {
  const secret = encryption.decrypt<string>(credential.secretEncrypted)
  if (typeof secret !== 'string') {
    // Wrong APP_KEY or a damaged row: an operator must look, never a silent auth failure.
    throw new CredentialError(
      `Secret of credential ${credential.id} cannot be decrypted with the current APP_KEY`
    )
  }
  return secret
}

/**
 * Credentials that still authenticate: the current one and those in their
 * grace period. Revoked ones never do (their grace has ended anyway; the
 * check does not depend on the clocks agreeing).
 */
export async function activeCredentials(merchantId: number, client?: TransactionClientContract) {
  return MerchantCredential.query({ client })
    .where('merchant_id', merchantId)
    .whereNull('revoked_at')
    .where((query) => {
      query.whereNull('expires_at').orWhere('expires_at', '>', new Date())
    })
    .orderBy('id', 'desc')
}

/**
 * The merchant's current credential: the newest one without an end date
 * (credentials in their grace period after a rotation have one). It signs
 * callbacks and is the base of the next rotation.
 */
export async function currentCredential(merchantId: number, client?: QueryClientContract) {
  const credential = await MerchantCredential.query({ client })
    .where('merchant_id', merchantId)
    .whereNull('expires_at')
    .orderBy('id', 'desc')
    .first()
  if (!credential) throw new CredentialError(`Merchant ${merchantId} has no current credential`)
  return credential
}

/** Issues the first credential pair of a new merchant. */
export async function issueCredentials(
  trx: TransactionClientContract,
  merchant: Merchant
): Promise<IssuedCredentials> {
  const issued = { token: randomString(TOKEN_LENGTH), secret: randomString(SECRET_LENGTH) }
  await storeCredential(trx, merchant.id, issued.token, issued.secret)
  return issued
}

/** A merchant's credentials cannot be used: no current one, or a secret APP_KEY cannot decrypt. */
export class CredentialError extends Error {}

export interface Replacement {
  /** The new values (only those rotated), shown once. */
  issued: Partial<IssuedCredentials>
  credential: MerchantCredential
  previous: MerchantCredential
  graceSeconds: number
  /** When the previous credentials stop working. */
  previousValidUntil: DateTime
}

/**
 * Replaces the token and/or the secret, inside the caller's transaction. The
 * previous credentials keep working until the grace period ends (0 revokes
 * them at once, for a leak); what is not rotated is carried over unchanged.
 * Both rotate_credentials and the scheduled rotations use it.
 */
export async function replaceCredentials(
  trx: TransactionClientContract,
  merchant: Merchant,
  options: { token: boolean; secret: boolean; graceSeconds: number }
): Promise<Replacement> {
  // Lock the merchant row so that two rotations at once cannot both become "current".
  await trx.from('merchants').where('id', merchant.id).forUpdate().first()
  const previous = await currentCredential(merchant.id, trx)

  const token = options.token ? randomString(TOKEN_LENGTH) : undefined
  const secret = options.secret ? randomString(SECRET_LENGTH) : decryptSecret(previous)

  const now = DateTime.utc()
  const previousValidUntil = now.plus({ seconds: options.graceSeconds })
  // Rows already in grace keep their earlier end; the current one starts its own.
  await MerchantCredential.query({ client: trx })
    .where('merchant_id', merchant.id)
    .whereNull('revoked_at')
    .where((query) =>
      query.whereNull('expires_at').orWhere('expires_at', '>', previousValidUntil.toJSDate())
    )
    .update({ expires_at: previousValidUntil.toJSDate() })
  if (options.graceSeconds === 0) {
    await MerchantCredential.query({ client: trx })
      .where('merchant_id', merchant.id)
      .whereNull('revoked_at')
      .update({ revoked_at: now.toJSDate() })
  }

  const credential = await MerchantCredential.create(
    {
      merchantId: merchant.id,
      tokenHash: token ? hashToken(token) : previous.tokenHash,
      tokenHint: token ? token.slice(-4) : previous.tokenHint,
      secretEncrypted: encryption.encrypt(secret),
      expiresAt: null,
    },
    { client: trx }
  )
  return {
    issued: { ...(token ? { token } : {}), ...(options.secret ? { secret } : {}) },
    credential,
    previous,
    graceSeconds: options.graceSeconds,
    previousValidUntil,
  }
}

async function storeCredential(
  trx: TransactionClientContract,
  merchantId: number,
  token: string,
  secret: string
) {
  return MerchantCredential.create(
    {
      merchantId,
      tokenHash: hashToken(token),
      tokenHint: token.slice(-4),
      secretEncrypted: encryption.encrypt(secret),
      expiresAt: null,
    },
    { client: trx }
  )
}

/**
 * Keeps a rotation's new values for one view by the operator who asked for
 * it (`operatorId`; null: asked from the server's shell): encrypted with
 * APP_KEY in credential_handovers, in the rotating transaction, until
 * view_credential_handover shows and clears them. Returns its id. The
 * plaintext goes nowhere else.
 */
export async function storeHandover(
  trx: TransactionClientContract,
  merchant: Merchant,
  replacement: Replacement,
  owner: {
    operatorId: number | null
    requestedBy: string
    approvalRequestId?: number | null
    rotationId?: number | null
  }
) {
  const { issued } = replacement
  const [id] = await trx.table('credential_handovers').insert({
    merchant_id: merchant.id,
    credential_id: replacement.credential.id,
    operator_id: owner.operatorId,
    requested_by: owner.requestedBy.slice(0, 120),
    approval_request_id: owner.approvalRequestId ?? null,
    rotation_id: owner.rotationId ?? null,
    token_encrypted: issued.token ? encryption.encrypt(issued.token) : null,
    secret_encrypted: issued.secret ? encryption.encrypt(issued.secret) : null,
    token_rotated: issued.token !== undefined,
    secret_rotated: issued.secret !== undefined,
    previous_valid_until: replacement.previousValidUntil.toJSDate(),
    created_at: new Date(),
  })
  return Number(id)
}
