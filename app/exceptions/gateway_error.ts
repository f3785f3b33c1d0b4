/**
 * An error the merchant API contract names: an HTTP status, a stable
 * kebab-case identifier callers branch on, a human message, and optionally a
 * `data` object (e.g. `{ code: 'killswitch_off' }` on a 503).
 *
 * The merchant API layer's own refusals (HTTPS, body, authentication, rate
 * limits: app/merchant_api/*); the exception handler renders them as the
 * spec's error envelope. Domain code refuses with a Refusal (#core/refusals)
 * instead, which app/merchant_api/refusal_statuses.ts maps to these fields.
 */
export class GatewayError extends Error {
  constructor(
    public status: number,
    public identifier: string,
    message: string,
    public data?: Record<string, unknown>
  ) {
    super(message)
    this.name = 'GatewayError'
  }

  static invalidInputs(message: string, status: 400 | 422 = 400) {
    return new GatewayError(status, 'invalid-inputs', message)
  }

  static authenticationFailed(message: string) {
    return new GatewayError(403, 'authentication-failed', message)
  }

  static notFound(message: string) {
    return new GatewayError(404, 'not-found', message)
  }

  static permissionDenied(message: string) {
    return new GatewayError(403, 'permission-denied', message)
  }

  static duplicateEntry(message: string) {
    return new GatewayError(409, 'duplicate-entry', message)
  }

  static serviceUnavailable(message: string, data?: Record<string, unknown>) {
    return new GatewayError(503, 'service-unavailable', message, data)
  }
}
