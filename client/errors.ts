/**
 * What can go wrong with a call, as types:
 * - GatewayApiError: the gateway answered with the error envelope (HTTP
 *   status, the spec's identifier in `error`, message, data);
 * - GatewayNetworkError: no answer (timeout, connection reset, socket hang
 *   up, refused, DNS, TLS...): whether the request ran is not known unless
 *   `mayHaveReachedGateway` is false;
 * - UnexpectedResponseError: an answer that is not the API's envelope (e.g.
 *   an HTML page from a proxy in front of the gateway).
 * All three extend MerchantClientError. Input mistakes found before anything
 * is sent (an amount with 3 decimals) are TypeError / RangeError.
 */

/** Every error identifier the specification lists (Errors, Authentication errors). */
export const API_ERROR_IDENTIFIERS = [
  'invalid-inputs',
  'authentication-failed',
  'signature-required',
  'signature-error',
  'ip-not-whitelisted',
  'permission-denied',
  'not-found',
  'method-not-allowed',
  'duplicate-entry',
  'channel-limit-reached',
  'too-many-requests',
  'service-unavailable',
] as const

export type ApiErrorIdentifier = (typeof API_ERROR_IDENTIFIERS)[number]

/**
 * What `GatewayApiError.error` holds: one of the listed identifiers, or an
 * identifier the specification does not list (a newer gateway, a 5xx), kept
 * as sent. Comparing with a listed identifier narrows as usual.
 */
export type ErrorIdentifier = ApiErrorIdentifier | (string & Record<never, never>)

const LISTED: ReadonlySet<string> = new Set(API_ERROR_IDENTIFIERS)

export function isApiErrorIdentifier(value: string): value is ApiErrorIdentifier {
  return LISTED.has(value)
}

export class MerchantClientError extends Error {
  /** The endpoint called, e.g. `/withdraw/create`. */
  readonly endpoint: string
  /** How many times the request was sent (1 + retries). */
  attempts: number

  constructor(message: string, endpoint: string, attempts: number, options?: ErrorOptions) {
    super(message, options)
    this.name = 'MerchantClientError'
    this.endpoint = endpoint
    this.attempts = attempts
  }
}

/** The gateway answered with the error envelope. Branch on `error`, never on `message`. */
export class GatewayApiError extends MerchantClientError {
  /** The HTTP status of the answer. */
  readonly status: number
  /** The envelope's `code` (the HTTP status mirrored). */
  readonly code: number
  /** The stable identifier, e.g. `duplicate-entry`. */
  readonly error: ErrorIdentifier
  /** The envelope's `data`, when the error carries one (e.g. `{ code: 'killswitch_off' }`). */
  readonly data: Record<string, unknown> | undefined
  /** Seconds from the Retry-After header, when there was one. */
  readonly retryAfterSeconds: number | undefined

  constructor(fields: {
    endpoint: string
    attempts: number
    status: number
    code: number
    error: string
    message: string
    data?: Record<string, unknown>
    retryAfterSeconds?: number
  }) {
    super(fields.message, fields.endpoint, fields.attempts)
    this.name = 'GatewayApiError'
    this.status = fields.status
    this.code = fields.code
    this.error = fields.error
    this.data = fields.data
    this.retryAfterSeconds = fields.retryAfterSeconds
  }

  /** Whether this is the given identifier. */
  is(identifier: ApiErrorIdentifier): boolean {
    return this.error === identifier
  }

  /** Whether the identifier is one the specification lists. */
  get listed(): boolean {
    return isApiErrorIdentifier(this.error)
  }
}

/** Why a request got no answer. */
export type NetworkFailure =
  | 'timeout'
  | 'connection-reset'
  | 'socket-hang-up'
  | 'connection-refused'
  | 'dns'
  | 'tls'
  | 'aborted'
  | 'other'

/** Failures after which the request cannot have reached the gateway's application. */
const NEVER_SENT: ReadonlySet<NetworkFailure> = new Set(['connection-refused', 'dns', 'tls'])

/** No answer from the gateway. */
export class GatewayNetworkError extends MerchantClientError {
  readonly failure: NetworkFailure
  /** Node's error code, e.g. `ECONNRESET`, `DEPTH_ZERO_SELF_SIGNED_CERT`. */
  readonly code: string | undefined

  constructor(fields: {
    endpoint: string
    attempts: number
    failure: NetworkFailure
    code?: string
    message: string
    cause?: unknown
  }) {
    super(fields.message, fields.endpoint, fields.attempts, { cause: fields.cause })
    this.name = 'GatewayNetworkError'
    this.failure = fields.failure
    this.code = fields.code
  }

  /**
   * False when the request never left (refused, DNS, TLS handshake): a
   * create did not run. True otherwise: it may have run; send the same
   * prepared request again (same bytes, same answer) or query the order.
   */
  get mayHaveReachedGateway(): boolean {
    return !NEVER_SENT.has(this.failure)
  }
}

/** An answer that is not the API's JSON envelope. */
export class UnexpectedResponseError extends MerchantClientError {
  readonly status: number
  /** The start of the answer's body, as text. */
  readonly bodyExcerpt: string

  constructor(fields: {
    endpoint: string
    attempts: number
    status: number
    bodyExcerpt: string
    message: string
  }) {
    super(fields.message, fields.endpoint, fields.attempts)
    this.name = 'UnexpectedResponseError'
    this.status = fields.status
    this.bodyExcerpt = fields.bodyExcerpt
  }
}
