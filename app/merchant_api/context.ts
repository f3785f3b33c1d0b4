import type Merchant from '#merchants/models/merchant'

/**
 * What the merchant API middleware stack attaches to the HTTP context: the
 * exact request bytes, their parsed JSON object, and the authenticated merchant.
 */
declare module '@adonisjs/core/http' {
  interface HttpContext {
    merchantRequest: { rawBody: Buffer; body: Record<string, unknown> }
    merchant: Merchant
  }
}
