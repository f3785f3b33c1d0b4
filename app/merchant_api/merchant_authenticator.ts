import Merchant from '#merchants/models/merchant'
import { GatewayError } from '#exceptions/gateway_error'
import { hashToken, safeEqual, signBody } from '#merchants/credentials'
import { epochSeconds } from '#core/clock'
import type { MerchantAuthCache, MerchantAuthData } from '#merchant_api/merchant_auth_cache'

export interface AuthenticationInput {
  body: Record<string, unknown>
  rawBody: Buffer
  signature: string | undefined
  sourceIp: string
}

const MERCHANT_ID_PATTERN = /^[A-Za-z0-9]{1,32}$/
const TIME_PATTERN = /^\d{1,12}(\.\d+)?$/

/**
 * Establishes which merchant sent a request, in the order the spec fixes:
 * merchant lookup and token, then the HMAC of the raw body, then the IP
 * whitelist. The `time` freshness check runs after the signature so that
 * nothing about it is revealed to a caller who cannot sign.
 *
 * The merchant, its credentials and whitelist come from the process's
 * MerchantAuthCache; what depends on the clock (a credential's grace end) is
 * checked here on every request, never only when the cache was filled.
 */
export class MerchantAuthenticator {
  constructor(
    private timeToleranceSeconds: number,
    private cache: MerchantAuthCache
  ) {}

  /**
   * `beforeDatabase`: awaited before the merchant is read from the database
   * (not when the cache has it), so that what must come before any database
   * work (the source IP's rate) has been answered.
   */
  async authenticate(
    input: AuthenticationInput,
    beforeDatabase?: () => Promise<unknown>
  ): Promise<Merchant> {
    const { merchant_id: merchantId, token } = input.body

    // One message for every identity failure: callers cannot probe which ids exist.
    const identityFailed = () =>
      GatewayError.authenticationFailed('merchant_id or token is missing or invalid')

    if (typeof merchantId !== 'string' || !MERCHANT_ID_PATTERN.test(merchantId))
      throw identityFailed()
    if (typeof token !== 'string' || token.length === 0 || token.length > 256)
      throw identityFailed()

    let known = this.cache.peek(merchantId)
    if (known === undefined) {
      await beforeDatabase?.()
      known = await this.cache.get(merchantId)
    }
    if (!known || known.status !== 'active') throw identityFailed()

    const tokenHash = hashToken(token)
    const now = Date.now()
    const candidates = known.credentials.filter(
      (credential) => credential.validAt(now) && safeEqual(credential.tokenHash, tokenHash)
    )
    if (candidates.length === 0) throw identityFailed()

    if (input.signature === undefined || input.signature === '') {
      throw new GatewayError(403, 'signature-required', 'X-SIGNATURE header is required')
    }
    // Every candidate is checked (no early exit) so timing does not tell which matched.
    let signed = false
    for (const credential of candidates) {
      const expected = signBody(credential.key, input.rawBody)
      signed = safeEqual(input.signature, expected) || signed
    }
    if (!signed) {
      throw new GatewayError(
        403,
        'signature-error',
        'X-SIGNATURE does not match the HMAC-SHA256 (lowercase hex) of the raw request body'
      )
    }

    this.#checkTime(input.body.time)

    if (known.whitelist.length > 0 && !known.allows(input.sourceIp)) {
      throw new GatewayError(
        403,
        'ip-not-whitelisted',
        `source IP ${input.sourceIp} is not in this merchant's IP whitelist`
      )
    }

    return merchantFor(known)
  }

  #checkTime(time: unknown) {
    const text =
      typeof time === 'number' ? String(time) : typeof time === 'string' ? time.trim() : ''
    if (!TIME_PATTERN.test(text)) {
      throw GatewayError.invalidInputs(
        'time is required: Unix epoch seconds, as a number or a string'
      )
    }
    const skew = Math.abs(epochSeconds() - Math.floor(Number(text)))
    if (skew > this.timeToleranceSeconds) {
      throw GatewayError.authenticationFailed(
        `time is ${skew} s away from the server clock (${epochSeconds()}); at most ${this.timeToleranceSeconds} s is accepted`
      )
    }
  }
}

/** The model made once per cache fill, by the data it was made from. */
const models = new WeakMap<MerchantAuthData, Merchant>()

/**
 * A model of its own per request, so that nothing a request does to it
 * reaches the cache: a copy of the attributes of one model made per cache
 * fill (the values are numbers, strings, booleans and immutable DateTimes).
 * Lucid's hydration of every column of the row, on every request, was a
 * twentieth of the web process's time on /balance (docs/performance.md).
 */
function merchantFor(known: MerchantAuthData): Merchant {
  let model = models.get(known)
  if (!model) {
    model = Merchant.$createFromAdapterResult(known.row)!
    models.set(known, model)
  }
  const copy = new Merchant()
  copy.$attributes = { ...model.$attributes }
  copy.$original = { ...model.$original }
  copy.$isPersisted = true
  copy.$isLocal = false
  return copy
}
