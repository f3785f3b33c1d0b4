/**
 * Reference client of the THB payment gateway's merchant API (version 1.0).
 * Node 24 standard library only; see client/README.md.
 */
export {
  MerchantClient,
  type ApiSuccess,
  type CallOptions,
  type MerchantClientOptions,
  type PreparedRequest,
} from './merchant_client.ts'
export {
  API_ERROR_IDENTIFIERS,
  GatewayApiError,
  GatewayNetworkError,
  isApiErrorIdentifier,
  MerchantClientError,
  UnexpectedResponseError,
  type ApiErrorIdentifier,
  type ErrorIdentifier,
  type NetworkFailure,
} from './errors.ts'
export {
  DEFAULT_RETRY_POLICY,
  type RetryCause,
  type RetryEvent,
  type RetryPolicy,
} from './retry.ts'
export { signBody, verifyCallback } from './signing.ts'
export {
  CallbackError,
  callbackDedupKey,
  callbackOrderKind,
  parseCallback,
  verifyAndParseCallback,
  type GatewayCallback,
  type PaymentCallback,
  type WithdrawCallback,
} from './callbacks.ts'
export { amountText, formatAmount, sameAmount, toSatang } from './amount.ts'
export * from './types.ts'
