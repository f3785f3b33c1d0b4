/**
 * The merchant API's request and response types, named exactly as the
 * specification names the fields (Merchant API 1.0).
 */

/** Bank codes the specification lists (field `bank`). The list may grow. */
export const BANK_CODES = [
  'BAAC',
  'BAY',
  'BBL',
  'CIMB',
  'CITI',
  'GHB',
  'GSB',
  'KBANK',
  'KK',
  'KTB',
  'LH',
  'SC',
  'SCB',
  'SCIB',
  'TISCO',
  'TTB',
  'UOB',
] as const

export type BankCode = (typeof BANK_CODES)[number]

/**
 * An amount in a request: a number (`100`, `100.5`) or a string (`"100.00"`)
 * with at most 2 decimals. The client sends it as a 2-decimal string.
 */
export type AmountInput = number | string

/** `YYYY-MM-DD HH:mm:ss`, GMT+7. */
export type GatewayDateTime = string

// ---------------------------------------------------------------- requests

/** Body of /payment/create, /payment/create-transfer, /payment/create-flex. */
export interface PaymentCreateInput {
  /** Alphanumeric, at most 40 characters; unique per merchant for 7 days. */
  merchant_order_id: string
  /** THB, at least 20.00. */
  amount: AmountInput
  /** The customer's bank. */
  bank: BankCode
  /** The customer's account holder name. */
  account_name: string
  /** 10 to 15 digits; the gateway strips non-digits. */
  account_no: string
  /** HTTPS URL for the completion callback; without it, poll /payment/query. */
  notify_url?: string
}

/** Body of /withdraw/create: pays an end customer from the merchant balance. */
export interface WithdrawCreateInput {
  merchant_order_id: string
  /** THB; min and max configured per account (default min 20.00). */
  amount: AmountInput
  /** The destination bank. */
  bank: BankCode
  account_name: string
  account_no: string
  notify_url?: string
}

/** Body of /thb-settlement/create: moves balance to the merchant's own account. */
export interface SettlementCreateInput {
  /** Unique per merchant for 7 days. */
  merchant_order_id: string
  /** THB; typically 100 to 500,000, configured per account. */
  amount: AmountInput
  bank: BankCode
  account_name: string
  account_no: string
  notify_url?: string
}

/** Body of /payment/query, /withdraw/query and /thb-settlement/query. */
export interface OrderQueryInput {
  /** 24 characters; marker P, W or M at index 3 for the endpoint queried. */
  platform_order_id: string
}

/** Body of /slip/upload. */
export interface SlipUploadInput {
  /** A payment order (marker P). */
  platform_order_id: string
  /** PNG or JPG bytes, plain base64 (no `data:` prefix), at most 2,000,000 bytes decoded. */
  image_base64: string
}

// ---------------------------------------------------------------- answers

/** /balance. Amounts are JSON numbers with 2 decimals (see amount.ts for exact arithmetic). */
export interface BalanceData {
  balance: number
  freeze_balance: number
  unsettle_balance: number
}

interface CreatedPaymentFields {
  /** 24 characters, marker P. */
  platform_order_id: string
  merchant_order_id: string
  /** UUID v7, embedded in payment_url. */
  uuid: string
  order_datetime: GatewayDateTime
  expire_datetime: GatewayDateTime
  amount: number
}

/** /payment/create. */
export interface QrPaymentData extends CreatedPaymentFields {
  /** What the customer must transfer (may exceed amount slightly); show this, not amount. */
  transfer_amount: number
  payment_type: 'QR'
  /** EMV PromptPay QR payload, to render as a QR image. */
  qrcode: string
  payment_url: string | null
}

/** /payment/create-transfer. */
export interface TransferPaymentData extends CreatedPaymentFields {
  transfer_amount: number
  payment_type: 'TRANSFER'
  qrcode: null
  deposit_bank: BankCode
  deposit_account_no: string
  deposit_account_name: string
  payment_url: string | null
}

/** /payment/create-flex. */
export interface FlexPaymentData extends CreatedPaymentFields {
  payment_type: 'FLEX'
  /** Always present: redirect the customer here. */
  payment_url: string
}

export type PaymentStatus = 'open' | 'unsettled_paid' | 'settled_paid' | 'error' | 'freeze'

/** /payment/query. */
export interface PaymentQueryData {
  platform_order_id: string
  merchant_order_id: string
  order_datetime: GatewayDateTime
  amount: number
  status: PaymentStatus
  expire_datetime: GatewayDateTime
  /** null until paid. */
  payment_datetime: GatewayDateTime | null
}

/** Withdraw and settlement status in queries. */
export type PayoutStatus = 'open' | 'success' | 'failed'

/** /withdraw/create (no status: the order is open). */
export interface WithdrawCreatedData {
  /** 24 characters, marker W. */
  platform_order_id: string
  merchant_order_id: string
  order_datetime: GatewayDateTime
  amount: number
  bank: BankCode
  account_no: string
  account_name: string
}

/** /withdraw/query. */
export interface WithdrawQueryData {
  platform_order_id: string
  merchant_order_id: string
  order_datetime: GatewayDateTime
  bank: BankCode
  account_no: string
  account_name: string
  amount: number
  status: PayoutStatus
  /** null while open. */
  done_datetime: GatewayDateTime | null
}

/** /thb-settlement/create. Total held from balance: amount + fee. */
export interface SettlementCreatedData {
  /** 24 characters, marker M. */
  platform_order_id: string
  merchant_order_id: string
  order_datetime: GatewayDateTime
  amount: number
  fee: number
  bank: BankCode
  account_no: string
  account_name: string
  status: 'open'
}

/** /thb-settlement/query. */
export interface SettlementQueryData {
  platform_order_id: string
  merchant_order_id: string
  order_datetime: GatewayDateTime
  amount: number
  bank: BankCode
  account_no: string
  account_name: string
  status: PayoutStatus
  done_datetime: GatewayDateTime | null
}

/** /slip/upload. HTTP 200 means processed; verification_msg says what the checks found. */
export interface SlipUploadData {
  /** Always `slip upload successful.` */
  msg: string
  verification_msg: string
}

// ---------------------------------------------------------------- envelopes

export interface SuccessEnvelope<T> {
  code: 200
  message: string
  data: T
  success: true
}

export interface ErrorEnvelope {
  code: number
  error: string
  success: false
  message: string
  data?: Record<string, unknown>
}

// ---------------------------------------------------------------- endpoints

/** Every authenticated endpoint: its request fields and its success data. */
export interface Endpoints {
  '/balance': { input: Record<string, never>; data: BalanceData }
  '/payment/create': { input: PaymentCreateInput; data: QrPaymentData }
  '/payment/create-transfer': { input: PaymentCreateInput; data: TransferPaymentData }
  '/payment/create-flex': { input: PaymentCreateInput; data: FlexPaymentData }
  '/payment/query': { input: OrderQueryInput; data: PaymentQueryData }
  '/withdraw/create': { input: WithdrawCreateInput; data: WithdrawCreatedData }
  '/withdraw/query': { input: OrderQueryInput; data: WithdrawQueryData }
  '/thb-settlement/create': { input: SettlementCreateInput; data: SettlementCreatedData }
  '/thb-settlement/query': { input: OrderQueryInput; data: SettlementQueryData }
  '/slip/upload': { input: SlipUploadInput; data: SlipUploadData }
}

export type EndpointPath = keyof Endpoints
export type EndpointInput<P extends EndpointPath> = Endpoints[P]['input']
export type EndpointData<P extends EndpointPath> = Endpoints[P]['data']

/** The order kind the marker at index 3 of platform_order_id names. */
export type OrderKind = 'payment' | 'withdraw' | 'settlement'

/** 'payment' (P), 'withdraw' (W), 'settlement' (M), or null for anything else. */
export function orderKind(platformOrderId: string): OrderKind | null {
  if (platformOrderId.length !== 24) return null
  const marker = platformOrderId[3]
  return marker === 'P'
    ? 'payment'
    : marker === 'W'
      ? 'withdraw'
      : marker === 'M'
        ? 'settlement'
        : null
}
