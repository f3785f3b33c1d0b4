import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { currentCredential, decryptSecret, signBody } from '#merchants/credentials'

/**
 * X-Signature of a callback body: lowercase hex HMAC-SHA256 of its UTF-8
 * bytes with the merchant's current secret.
 */
export async function signCallbackBody(
  merchantId: number,
  body: string,
  client?: QueryClientContract
) {
  const secret = decryptSecret(await currentCredential(merchantId, client))
  return signBody(secret, Buffer.from(body, 'utf8'))
}
