import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { GatewayError } from '#exceptions/gateway_error'

/**
 * The merchant API is HTTPS only. A request is HTTPS when it arrived on the
 * app's own TLS socket, or when a trusted proxy says so in X-Forwarded-Proto.
 * Anything else is answered without reading the body or looking at credentials.
 */
export default class MerchantHttpsMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    if (!ctx.request.secure()) {
      throw new GatewayError(
        403,
        'https-required',
        'The merchant API accepts HTTPS only; the request was not processed'
      )
    }
    return next()
  }
}
