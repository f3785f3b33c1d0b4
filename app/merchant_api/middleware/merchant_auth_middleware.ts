import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import app from '@adonisjs/core/services/app'
import { MerchantAuthenticator } from '#merchant_api/merchant_authenticator'
import { merchantAuthCache } from '#merchant_api/merchant_auth_cache'
import { listenForMerchantAuthChanges } from '#merchants/merchant_auth_changes'
import { listenForConfigChanges } from '#core/process_cache'
import { RedisConnections } from '#core/redis'
import { GatewayError } from '#exceptions/gateway_error'
import { answerAgain, keepIfRefused } from '#merchant_api/stored_answers'
import type { RequestKey } from '#core/merchant_requests'
import { MerchantRateLimits, RateLimitedError } from '#merchant_api/rate_limits'
import { describeAuthFailure } from '#merchant_api/authentication_failures'
import gateway from '#config/gateway'

const authenticator = new MerchantAuthenticator(gateway.timeToleranceSeconds, merchantAuthCache)

/**
 * How an endpoint treats the same bytes sent again: `once` (state-changing:
 * executed once, the same answer every time, stored_answers.ts), `off` (reads,
 * which change nothing: identical polls are normal).
 *
 * `once` endpoints whose action writes the request's row before anything
 * else (the creates: first statement of their one round trip) are not looked
 * up first: that INSERT finds the bytes sent before (RequestAlreadyProcessed,
 * answered again by the exception handler), and a new request, nearly every
 * one, costs no read. `once-read-first` looks the request up before the
 * route runs, for a slip upload, whose action reads and verifies the file
 * before its transaction.
 */
export type ReplayProtection = 'once' | 'once-read-first' | 'off'

let guards: { limits: MerchantRateLimits } | undefined
async function replayAndLimits() {
  if (!guards) {
    const connections = await app.container.make(RedisConnections)
    listenForMerchantAuthChanges(connections)
    listenForConfigChanges(connections)
    guards = { limits: new MerchantRateLimits(connections.main, gateway.rateLimits) }
  }
  return guards
}

const AUTHENTICATION_ERRORS = new Set([
  'authentication-failed',
  'signature-required',
  'signature-error',
  'ip-not-whitelisted',
])

/**
 * Binds the authenticated merchant to the request (spec: Server verification
 * order 3-5), between the request rate limits and the replay store:
 * 1. the source IP's request rate, before any database work;
 * 2. merchant, token, signature, time, IP whitelist; a failure is counted
 *    against its address and the merchant_id it names, and answered 429
 *    instead of 403 past their failure limits. A request that authenticates
 *    is never refused because of failures counted there;
 * 3. the merchant's own rate limit;
 * 4. a state-changing request sent before is answered again as it was, and
 *    a new one runs under its key, so it runs once (see ReplayProtection).
 */
const EMPTY_BODY = Buffer.alloc(0)

export default class MerchantAuthMiddleware {
  async handle(
    ctx: HttpContext,
    next: NextFn,
    options: { replay: ReplayProtection } = { replay: 'once' }
  ) {
    const { limits } = await replayAndLimits()
    const ip = ctx.request.ip()
    try {
      // The address's count and the merchant's go to Redis in one round trip:
      // the first is sent now and answered before any database read or any
      // refusal of this request; the authentication in between reads only
      // this process's cache (else it waits for the address's answer first).
      const ipLimit = limits.checkIp(ip)
      ipLimit.catch(() => {}) // awaited below on every path
      const signature = ctx.request.header('x-signature')
      try {
        ctx.merchant = await authenticator.authenticate(
          {
            body: ctx.merchantRequest.body,
            rawBody: ctx.merchantRequest.rawBody,
            signature,
            sourceIp: ip,
          },
          () => ipLimit
        )
      } catch (error) {
        await ipLimit
        if (error instanceof GatewayError && AUTHENTICATION_ERRORS.has(error.identifier)) {
          const failure = await describeAuthFailure(error, ip, ctx.merchantRequest.body)
          throw (await limits.authenticationFailed(failure)) ?? error
        }
        throw error
      }
      // The signature is checked: the raw bytes are not needed any more, and
      // on a slip upload they are megabytes held for the rest of the request.
      ctx.merchantRequest.rawBody = EMPTY_BODY
      // The request's log lines name the merchant themselves (the request
      // logger, the exception handler): a binding on the request's logger
      // would be formatted, through the log redaction, on every request.

      // A request the address's limit refuses may have counted against its
      // merchant's limit too: one point of the merchant's own requests.
      const merchantLimit = limits.checkMerchant(ctx.merchant.merchantId, ctx.merchant.apiRateLimit)
      merchantLimit.catch(() => {})
      await ipLimit
      await merchantLimit
    } catch (error) {
      if (error instanceof RateLimitedError) {
        ctx.response.header('Retry-After', String(error.retryAfterSeconds))
      }
      throw error
    }
    if (options.replay === 'off') return next()
    return this.#once(
      ctx,
      next,
      {
        merchantId: ctx.merchant.id,
        // Authenticated: 64 lowercase hex, the HMAC of these exact bytes.
        signature: ctx.request.header('x-signature')!,
        endpoint: ctx.request.url(),
      },
      options.replay === 'once-read-first'
    )
  }

  /**
   * The same request (same bytes, same signature) gets the same answer: one
   * already answered is answered again; a new one runs under its key, which
   * the action writes with what it creates (one execution, whatever the
   * number of processes); its refusal is kept. A duplicate that arrived
   * while the first ran waited for it and is answered what it was.
   */
  async #once(ctx: HttpContext, next: NextFn, key: RequestKey, readFirst: boolean) {
    if (readFirst && (await answerAgain(ctx, key))) return
    ctx.requestKey = key
    // The route's errors are answered before next() returns (the exception
    // handler answers RequestAlreadyProcessed again): what was sent is kept.
    await next()
    if (ctx.response.getStatus() === 200) return
    // A refusal may come from the effects of the same bytes run before or
    // meanwhile (their order's merchant_order_id, the slip they uploaded,
    // a switch turned off since): their answer is this one's.
    if (await answerAgain(ctx, key)) return
    if (!(await keepIfRefused(ctx, key))) await answerAgain(ctx, key)
  }
}
