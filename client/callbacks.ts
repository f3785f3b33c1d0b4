import { toSatang } from './amount.ts'
import { verifyCallback } from './signing.ts'
import { orderKind, type BankCode, type OrderKind } from './types.ts'

/** Payment callback (mode PAYMENT): sent when a payment order is paid or fails. */
export interface PaymentCallback {
  merchant_id: string
  /** Marker P. */
  platform_order_id: string
  merchant_order_id: string
  mode: 'PAYMENT'
  amount: number
  status: 'PAID' | 'FAIL'
  /** Epoch milliseconds (requests use seconds, callbacks milliseconds). */
  timestamp: number
}

/**
 * Withdraw / settlement callback (mode WITHDRAW for both): a withdraw has
 * marker W at index 3 of platform_order_id, a settlement marker M.
 */
export interface WithdrawCallback {
  merchant_id: string
  /** Marker W (withdraw) or M (settlement). */
  platform_order_id: string
  merchant_order_id: string
  mode: 'WITHDRAW'
  bank: BankCode
  account_no: string
  account_name: string
  amount: number
  status: 'SUCCESS' | 'FAIL'
  timestamp: number
}

export type GatewayCallback = PaymentCallback | WithdrawCallback

export class CallbackError extends Error {
  /** `signature`: X-Signature does not match; `malformed`: not a callback body of the spec. */
  readonly reason: 'signature' | 'malformed'

  constructor(reason: 'signature' | 'malformed', message: string) {
    super(message)
    this.name = 'CallbackError'
    this.reason = reason
  }
}

function malformed(message: string): never {
  throw new CallbackError('malformed', message)
}

function requireString(body: Record<string, unknown>, field: string) {
  if (typeof body[field] !== 'string') malformed(`${field} must be a string`)
}

/**
 * Parses a callback body (after verifyCallback) into its typed shape,
 * checking every field the spec lists: mode first, then status, the marker
 * of platform_order_id, the amount (2 decimals) and the timestamp. Fields
 * the spec does not list are kept as they are. Throws CallbackError
 * (`malformed`) otherwise.
 */
export function parseCallback(rawBody: Buffer | string): GatewayCallback {
  let body: unknown
  try {
    body = JSON.parse(Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody)
  } catch {
    malformed('the body is not JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    malformed('the body is not a JSON object')
  }
  const fields = body as Record<string, unknown>
  for (const field of ['merchant_id', 'platform_order_id', 'merchant_order_id']) {
    requireString(fields, field)
  }
  if (typeof fields.amount !== 'number') malformed('amount must be a number')
  try {
    toSatang(fields.amount)
  } catch {
    malformed(`amount is not a THB amount with 2 decimals: ${fields.amount}`)
  }
  if (typeof fields.timestamp !== 'number' || !Number.isSafeInteger(fields.timestamp)) {
    malformed('timestamp must be epoch milliseconds')
  }
  const kind = orderKind(fields.platform_order_id as string)

  if (fields.mode === 'PAYMENT') {
    if (fields.status !== 'PAID' && fields.status !== 'FAIL') {
      malformed(`a payment callback's status is PAID or FAIL, not ${String(fields.status)}`)
    }
    if (kind !== 'payment') malformed('a payment callback names an order with marker P')
    return fields as unknown as PaymentCallback
  }
  if (fields.mode === 'WITHDRAW') {
    if (fields.status !== 'SUCCESS' && fields.status !== 'FAIL') {
      malformed(`a withdraw callback's status is SUCCESS or FAIL, not ${String(fields.status)}`)
    }
    if (kind !== 'withdraw' && kind !== 'settlement') {
      malformed('a withdraw callback names an order with marker W or M')
    }
    for (const field of ['bank', 'account_no', 'account_name']) requireString(fields, field)
    return fields as unknown as WithdrawCallback
  }
  return malformed(`unknown mode ${String(fields.mode)}`)
}

/**
 * verifyCallback, then parseCallback: the typed callback, or a CallbackError
 * (`signature` when X-Signature does not match: answer it with a non-200 and
 * do nothing else).
 */
export function verifyAndParseCallback(
  rawBody: Buffer,
  signatureHeader: string | string[] | undefined,
  secret: string
): GatewayCallback {
  if (!verifyCallback(rawBody, signatureHeader, secret)) {
    throw new CallbackError('signature', 'X-Signature does not match the callback body')
  }
  return parseCallback(rawBody)
}

/** 'payment', 'withdraw' or 'settlement' (the marker of platform_order_id). */
export function callbackOrderKind(callback: GatewayCallback): OrderKind {
  return orderKind(callback.platform_order_id)!
}

/**
 * The spec's recommended deduplication key: platform_order_id with status
 * (the same callback may be delivered more than once).
 */
export function callbackDedupKey(callback: GatewayCallback): string {
  return `${callback.platform_order_id}:${callback.status}`
}
