import { randomBytes } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * The page's Content-Security-Policy: nothing but its own inline script and
 * stylesheet (each carrying this response's nonce), the QR as a data: image,
 * the status poll and the slip form to the gateway itself.
 */
export function paymentPageCsp(nonce: string) {
  return [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `img-src 'self' data:`,
    `connect-src 'self'`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
    `base-uri 'none'`,
    `object-src 'none'`,
  ].join('; ')
}

/**
 * The headers of every answer under /pay/ (pages, redirects, the status
 * poll, and the error pages app/exceptions/handler.ts renders there), with a
 * fresh nonce that views read as `cspNonce`. Returns the nonce.
 */
export function setPaymentPageHeaders(response: HttpContext['response']) {
  const nonce = randomBytes(16).toString('base64')
  response.header('Cache-Control', 'no-store')
  response.header('Referrer-Policy', 'no-referrer')
  response.header('X-Frame-Options', 'DENY')
  response.header('Content-Security-Policy', paymentPageCsp(nonce))
  return nonce
}
