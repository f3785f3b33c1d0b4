import type DepositAccount from '#payments/models/deposit_account'

export interface ExternalPaymentRequest {
  account: DepositAccount
  orderUuid: string
  platformOrderId: string
  amount: number // satang
  expireAt: Date
}

export interface ExternalPaymentSession {
  /** The provider's own payment page the hosted page redirects the customer to. */
  redirectUrl: string
  providerReference: string
}

/**
 * An onward payment provider behind an `external` deposit channel (a PSP with
 * its own hosted page). Implementations must answer within `timeoutMs` or
 * throw: the caller then drops the channel and tries the next one.
 */
export interface DepositProvider {
  readonly name: string
  createPayment(request: ExternalPaymentRequest, timeoutMs: number): Promise<ExternalPaymentSession>
}

export class DepositProviderError extends Error {}
