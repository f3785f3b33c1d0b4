/**
 * What the domain refuses, in its own words. A refusal is an outcome the
 * caller can act on (a duplicate order id, a balance too short), not a
 * failure: it carries what the caller needs to know and no HTTP status.
 * The edges decide how each kind is answered: the merchant API's exception
 * handler through app/merchant_api/refusal_statuses.ts, the hosted payment
 * page in its controller. Operator actions refuse with ActionError
 * (#core/validation), whose messages name form fields.
 *
 * `kind` tells the kinds apart; every kind is in `DomainRefusal`, so an
 * edge that maps them all is checked to miss none.
 */
export abstract class Refusal extends Error {
  abstract readonly kind: DomainRefusal['kind']

  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

/* Orders: finding them, and the input that creates them. */

/** The order is missing, or belongs to another merchant (the two look the same). */
export class OrderNotFound extends Refusal {
  readonly kind = 'order_not_found'
}

/**
 * The order's input breaks a rule the request could not know in advance or
 * names it badly: a missing or malformed platform_order_id, an amount
 * outside the merchant's range, a settlement account not registered.
 */
export class InvalidOrderInput extends Refusal {
  readonly kind = 'invalid_order_input'
}

/** The merchant_order_id was already used within its 7-day window. */
export class DuplicateMerchantOrderId extends Refusal {
  readonly kind = 'duplicate_merchant_order_id'
}

/** A withdrawal to the same bank, account and amount within 3 minutes (when the check is on). */
export class DuplicateWithdrawal extends Refusal {
  readonly kind = 'duplicate_withdrawal'
}

/** The available balance does not cover the amount and the fee. */
export class InsufficientBalance extends Refusal {
  readonly kind = 'insufficient_balance'
}

/* The merchant's and the platform's gates. */

/** The operation (payments, withdrawals, settlements) is switched off for the merchant. */
export class OperationDisabled extends Refusal {
  readonly kind = 'operation_disabled'

  constructor(
    message: string,
    public operation: 'payments' | 'withdrawals' | 'settlements'
  ) {
    super(message)
  }
}

/** The partner configuration the operation needs (deposit group, payout route) is missing. */
export class PartnerConfigurationMissing extends Refusal {
  readonly kind = 'partner_configuration_missing'
}

/** A flex payment needs the platform's payment page domain, and it has none. */
export class PaymentPageNotConfigured extends Refusal {
  readonly kind = 'payment_page_not_configured'
}

/** The platform's deposit killswitch is off; `code` is the specification's name for it. */
export class DepositsSwitchedOff extends Refusal {
  readonly kind = 'deposits_switched_off'
  readonly code = 'killswitch_off'
}

/** Deposits are outside the platform's open period; `code` as the specification names it. */
export class DepositsOutsideOpenPeriod extends Refusal {
  readonly kind = 'deposits_outside_open_period'
  readonly code = 'outside_open_period'
}

/** Settlements are outside the platform's settlement hours. */
export class SettlementsOutsideOpenPeriod extends Refusal {
  readonly kind = 'settlements_outside_open_period'
}

/* Deposit channels. */

/** Every eligible deposit channel has reached its hourly or daily limit. */
export class ChannelLimitReached extends Refusal {
  readonly kind = 'channel_limit_reached'
}

/** No deposit account can take the order now (none eligible, none free); retry shortly. */
export class NoDepositChannel extends Refusal {
  readonly kind = 'no_deposit_channel'
}

/* Slips. */

/** The uploaded file is not a PNG or JPG, or is larger than the source allows. */
export class InvalidSlipImage extends Refusal {
  readonly kind = 'invalid_slip_image'
}

/** The order takes no more slips: it is not open, or too old. */
export class SlipsNotAccepted extends Refusal {
  readonly kind = 'slips_not_accepted'
}

/** A per-order slip limit: too soon after the order's creation or its last slip. */
export class SlipUploadTooSoon extends Refusal {
  readonly kind = 'slip_upload_too_soon'

  constructor(
    message: string,
    public retryAfterSeconds: number
  ) {
    super(message)
  }
}

/** The order has as many slips as one order may have (waiting does not help). */
export class SlipLimitReached extends Refusal {
  readonly kind = 'slip_limit_reached'
}

export type DomainRefusal =
  | OrderNotFound
  | InvalidOrderInput
  | DuplicateMerchantOrderId
  | DuplicateWithdrawal
  | InsufficientBalance
  | OperationDisabled
  | PartnerConfigurationMissing
  | PaymentPageNotConfigured
  | DepositsSwitchedOff
  | DepositsOutsideOpenPeriod
  | SettlementsOutsideOpenPeriod
  | ChannelLimitReached
  | NoDepositChannel
  | InvalidSlipImage
  | SlipsNotAccepted
  | SlipUploadTooSoon
  | SlipLimitReached

/** Narrows a caught error to a domain refusal. */
export function isRefusal(error: unknown): error is DomainRefusal {
  return error instanceof Refusal
}
