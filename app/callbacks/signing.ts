import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import MerchantCredential from '#models/merchant_credential'
import { decryptSecret, signBody } from '#services/credentials'

/**
 * The merchant's current signing secret: the newest credential that has no
 * end date (credentials in their grace period after a rotation have one).
 */
export async function currentSigningSecret(merchantId: number, client?: QueryClientContract) {
  const credential = await MerchantCredential.query({ client })
    .where('merchant_id', merchantId)
    .whereNull('expires_at')
    .orderBy('id', 'desc')
    .first()
  if (!credential) throw new Error(`Merchant ${merchantId} has no current credential to sign with`)
  return decryptSecret(credential)
}

/** X-Signature of a callback body: lowercase hex HMAC-SHA256 of its UTF-8 bytes. */
export async function signCallbackBody(
  merchantId: number,
  body: string,
  client?: QueryClientContract
) {
  return signBody(await currentSigningSecret(merchantId, client), Buffer.from(body, 'utf8'))
}
