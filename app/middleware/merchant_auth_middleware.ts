import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { MerchantAuthenticator } from '#services/merchant_authenticator'
import gateway from '#config/gateway'

const authenticator = new MerchantAuthenticator(gateway.timeToleranceSeconds)

/** Binds the authenticated merchant to the request (spec: Server verification order 3-5). */
export default class MerchantAuthMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    ctx.merchant = await authenticator.authenticate({
      body: ctx.merchantRequest.body,
      rawBody: ctx.merchantRequest.rawBody,
      signature: ctx.request.header('x-signature'),
      sourceIp: ctx.request.ip(),
    })
    ctx.logger = ctx.logger.child({ merchant_id: ctx.merchant.merchantId })
    return next()
  }
}
