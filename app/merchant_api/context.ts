import type Merchant from '#merchants/models/merchant'
import type { RequestKey } from '#core/merchant_requests'

/**
 * What the merchant API middleware stack attaches to the HTTP context: the
 * exact request bytes, their parsed JSON object, the authenticated merchant,
 * and the key a state-changing request is executed once under.
 */
declare module '@adonisjs/core/http' {
  interface HttpContext {
    merchantRequest: { rawBody: Buffer; body: Record<string, unknown> }
    merchant: Merchant
    /** A state-changing request's key: it is executed once (stored_answers.ts). */
    requestKey?: RequestKey
  }
}
