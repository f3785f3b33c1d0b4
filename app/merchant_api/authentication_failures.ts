import type { GatewayError } from '#exceptions/gateway_error'
import { merchantAuthCache } from '#merchant_api/merchant_auth_cache'
import type { AuthFailure } from '#merchant_api/rate_limits'

const MERCHANT_ID_PATTERN = /^[A-Za-z0-9]{1,32}$/

/**
 * Who a failed authentication is counted against: always its source address;
 * also the merchant_id it named when that merchant exists (made-up ids are
 * counted per address only, so that they cannot fill Redis with counters).
 *
 * Any refusal after the identity check (signature-required, signature-error,
 * ip-not-whitelisted) means the token matched: the merchant exists and the
 * caller holds its token. An `authentication-failed` may be an unknown
 * merchant_id; the merchant lookup authentication has just made is read again
 * from the process's cache (no database work while the entry lives, by
 * default AUTH_CACHE_TTL_MS = 1 s).
 */
export async function describeAuthFailure(
  error: GatewayError,
  ip: string,
  body: Record<string, unknown>,
  cache: Pick<typeof merchantAuthCache, 'get'> = merchantAuthCache
): Promise<AuthFailure> {
  const named = body.merchant_id
  const merchantId = typeof named === 'string' && MERCHANT_ID_PATTERN.test(named) ? named : null
  if (merchantId === null) return { ip, merchantId: null, holdsToken: false, error }
  if (error.identifier !== 'authentication-failed') {
    return { ip, merchantId, holdsToken: true, error }
  }
  const known = await cache.get(merchantId).catch(() => null)
  return { ip, merchantId: known ? merchantId : null, holdsToken: false, error }
}
