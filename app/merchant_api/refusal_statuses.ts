import type { DomainRefusal } from '#core/refusals'

/** How the merchant API answers a refusal: the error envelope's status, identifier and data. */
export interface RefusalAnswer {
  status: number
  /** The specification's error identifier. */
  identifier: string
  data?: Record<string, unknown>
  /** Seconds for a `Retry-After` header, when waiting helps. */
  retryAfterSeconds?: number
}

type Answers = {
  [Kind in DomainRefusal['kind']]: (
    refusal: Extract<DomainRefusal, { kind: Kind }>
  ) => RefusalAnswer
}

const invalidInputs = { status: 400, identifier: 'invalid-inputs' }
const notFound = { status: 404, identifier: 'not-found' }
const permissionDenied = { status: 403, identifier: 'permission-denied' }
const duplicateEntry = { status: 409, identifier: 'duplicate-entry' }
const serviceUnavailable = { status: 503, identifier: 'service-unavailable' }
const tooManyRequests = { status: 429, identifier: 'too-many-requests' }

/**
 * Every domain refusal as the specification's error table answers it (its
 * "Errors" section and each endpoint's). The only place the API's statuses
 * of domain refusals are decided: the typed map fails to compile when a
 * kind is missing.
 */
const ANSWERS: Answers = {
  order_not_found: () => notFound,
  invalid_order_input: () => invalidInputs,
  duplicate_merchant_order_id: () => duplicateEntry,
  duplicate_withdrawal: () => duplicateEntry,
  // Spec: insufficient balance on create is 400 invalid-inputs.
  insufficient_balance: () => invalidInputs,
  operation_disabled: () => permissionDenied,
  partner_configuration_missing: () => notFound,
  // Spec: flex without payment_page_domain is 400 invalid-inputs.
  payment_page_not_configured: () => invalidInputs,
  // Platform state, not a fault: 503 naming the state in data.code.
  deposits_switched_off: (refusal) => ({ ...serviceUnavailable, data: { code: refusal.code } }),
  deposits_outside_open_period: (refusal) => ({
    ...serviceUnavailable,
    data: { code: refusal.code },
  }),
  settlements_outside_open_period: () => permissionDenied,
  channel_limit_reached: () => ({ status: 429, identifier: 'channel-limit-reached' }),
  no_deposit_channel: () => serviceUnavailable,
  // Spec: slip upload input failures are 422.
  invalid_slip_image: () => ({ status: 422, identifier: 'invalid-inputs' }),
  slips_not_accepted: () => permissionDenied,
  slip_upload_too_soon: (refusal) => ({
    ...tooManyRequests,
    retryAfterSeconds: refusal.retryAfterSeconds,
  }),
  slip_limit_reached: () => tooManyRequests,
}

export function refusalAnswer(refusal: DomainRefusal): RefusalAnswer {
  return (ANSWERS[refusal.kind] as (refusal: DomainRefusal) => RefusalAnswer)(refusal)
}
