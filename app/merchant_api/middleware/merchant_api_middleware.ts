import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import MerchantHttpsMiddleware from '#merchant_api/middleware/merchant_https_middleware'
import MerchantBodyMiddleware from '#merchant_api/middleware/merchant_body_middleware'
import MerchantAuthMiddleware, {
  type ReplayProtection,
} from '#merchant_api/middleware/merchant_auth_middleware'

const https = new MerchantHttpsMiddleware()
const body = new MerchantBodyMiddleware()
const auth = new MerchantAuthMiddleware()

/**
 * The merchant API's edge, in the spec's order: HTTPS only, the raw body
 * read and parsed, then authentication, rate limits and the replay rule.
 * One middleware on the route, each step in its own file: the framework
 * resolves a route middleware through its container on every request, a
 * cost each step would pay again (docs/performance.md).
 */
export default class MerchantApiMiddleware {
  handle(ctx: HttpContext, next: NextFn, options: { replay: ReplayProtection }) {
    return https.handle(ctx, () => body.handle(ctx, () => auth.handle(ctx, next, options)))
  }
}
