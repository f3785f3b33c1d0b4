import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import app from '@adonisjs/core/services/app'
import { MerchantAuthenticator } from '#merchant_api/merchant_authenticator'
import { merchantAuthCache } from '#merchant_api/merchant_auth_cache'
import { listenForMerchantAuthChanges } from '#merchants/merchant_auth_changes'
import { listenForConfigChanges } from '#core/process_cache'
import { RedisConnections } from '#core/redis'
import { GatewayError } from '#exceptions/gateway_error'
import {
  ReplayGuard,
  ReplayStoreUnavailableError,
  type ReplayProtection,
} from '#merchant_api/replay_guard'
import { MerchantRateLimits, RateLimitedError } from '#merchant_api/rate_limits'
import gateway from '#config/gateway'

const authenticator = new MerchantAuthenticator(gateway.timeToleranceSeconds, merchantAuthCache)

let guards: { replay: ReplayGuard; limits: MerchantRateLimits } | undefined
async function replayAndLimits() {
  if (!guards) {
    const connections = await app.container.make(RedisConnections)
    listenForMerchantAuthChanges(connections)
    listenForConfigChanges(connections)
    const redis = connections.main
    guards = {
      replay: new ReplayGuard(redis, gateway.timeToleranceSeconds),
      limits: new MerchantRateLimits(redis, gateway.rateLimits),
    }
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
 * 1. the source IP's limits, before any database work;
 * 2. merchant, token, signature, time, IP whitelist (failures count against the IP);
 * 3. the merchant's own rate limit;
 * 4. the signature is claimed in the replay store (see ReplayProtection).
 */
const EMPTY_BODY = Buffer.alloc(0)

export default class MerchantAuthMiddleware {
  async handle(
    ctx: HttpContext,
    next: NextFn,
    options: { replay: ReplayProtection } = { replay: 'required' }
  ) {
    const { replay, limits } = await replayAndLimits()
    const ip = ctx.request.ip()
    try {
      await limits.checkIp(ip)

      const signature = ctx.request.header('x-signature')
      try {
        ctx.merchant = await authenticator.authenticate({
          body: ctx.merchantRequest.body,
          rawBody: ctx.merchantRequest.rawBody,
          signature,
          sourceIp: ip,
        })
      } catch (error) {
        if (error instanceof GatewayError && AUTHENTICATION_ERRORS.has(error.identifier)) {
          await limits.penalizeIp(ip)
        }
        throw error
      }
      // The signature is checked: the raw bytes are not needed any more, and
      // on a slip upload they are megabytes held for the rest of the request.
      ctx.merchantRequest.rawBody = EMPTY_BODY
      ctx.logger = ctx.logger.child({ merchant_id: ctx.merchant.merchantId })

      await limits.checkMerchant(ctx.merchant.merchantId, ctx.merchant.apiRateLimit)
      if (options.replay !== 'off') {
        await this.#claim(ctx, replay, signature!, options.replay)
      }
    } catch (error) {
      if (error instanceof RateLimitedError) {
        ctx.response.header('Retry-After', String(error.retryAfterSeconds))
      }
      throw error
    }
    return next()
  }

  async #claim(ctx: HttpContext, replay: ReplayGuard, signature: string, mode: ReplayProtection) {
    let first: boolean
    try {
      first = await replay.claim(ctx.merchant.merchantId, signature)
    } catch (error) {
      if (!(error instanceof ReplayStoreUnavailableError)) throw error
      if (mode === 'best-effort') {
        ctx.logger.warn('replay store unavailable; merchant_order_id uniqueness still applies')
        return
      }
      ctx.response.header('Retry-After', '5')
      throw GatewayError.serviceUnavailable(
        'replay protection is briefly unavailable, so this request was not processed; retry with a freshly signed request'
      )
    }
    if (!first) {
      throw GatewayError.duplicateEntry(
        'this exact request (same X-SIGNATURE) was already received and is not processed again; a new request needs a fresh time and signature; query the order to see its state'
      )
    }
  }
}
