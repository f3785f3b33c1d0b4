import { DateTime } from 'luxon'
import Merchant from '#merchants/models/merchant'
import MerchantCredential from '#merchants/models/merchant_credential'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { recordAudit } from '#core/audit'
import { SYSTEM } from '#core/actor'
import { inTransaction } from '#core/transaction'

/**
 * Revokes credentials whose grace period has ended, one transaction and one
 * audit row per merchant. Authentication already refuses them by their end
 * date; revocation records it and makes it final. Idempotent: revoked rows
 * are skipped. Returns how many credentials this call revoked.
 */
export async function revokeExpiredCredentials(now = DateTime.utc(), batch = 500) {
  const expired = await MerchantCredential.query()
    .whereNull('revoked_at')
    .whereNotNull('expires_at')
    .where('expires_at', '<=', now.toJSDate())
    .limit(batch)
    .select('merchant_id')
  const merchantIds = [...new Set(expired.map((credential) => credential.merchantId))]
  let revoked = 0
  for (const merchantId of merchantIds) revoked += await revokeFor(merchantId, now)
  return revoked
}

async function revokeFor(merchantId: number, now: DateTime) {
  return inTransaction(async (trx) => {
    // The merchant row first, as rotations lock it: a rotation and a revocation take turns.
    const merchant = await Merchant.query({ client: trx })
      .where('id', merchantId)
      .forUpdate()
      .firstOrFail()
    const credentials = await MerchantCredential.query({ client: trx })
      .where('merchant_id', merchantId)
      .whereNull('revoked_at')
      .whereNotNull('expires_at')
      .where('expires_at', '<=', now.toJSDate())
      .orderBy('id')
    if (credentials.length === 0) return 0
    await MerchantCredential.query({ client: trx })
      .whereIn(
        'id',
        credentials.map((credential) => credential.id)
      )
      .update({ revoked_at: now.toJSDate() })
    // Authentication already refused them by their end date; cached copies go anyway.
    await merchantAuthChanged(trx, merchant.merchantId)
    await recordAudit(trx, SYSTEM, {
      action: 'merchant.credentials.revoke',
      target: { type: 'merchant', id: merchant.merchantId },
      after: {
        revoked: credentials.map((credential) => ({
          credential_id: credential.id,
          token_hint: credential.tokenHint,
          grace_ended_at: credential.expiresAt!.toUTC().toISO(),
        })),
      },
      reason: { code: 'grace_ended' },
    })
    return credentials.length
  })
}
