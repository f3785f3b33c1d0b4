/**
 * PromptPay ("Thai QR Payment") payloads: the EMVCo merchant-presented QR
 * text that a payer's banking app scans.
 *
 * The payload is a flat list of TLV fields (2-digit tag, 2-digit length,
 * value). Tag 29 is a PromptPay credit transfer to a mobile number, national
 * or tax id, or e-wallet id; tag 30 is a bill payment to a biller id with
 * references (ref1/ref2) that come back in bank confirmations. Tag 63, last,
 * is a CRC-16/CCITT-FALSE over everything before its value.
 *
 * Field order is pinned to 00, 01, 29|30, 58, 53, 54, 63: the order of npm
 * `promptpay-qr` 0.5.0, whose published known-answer vectors this module
 * reproduces byte for byte. Parsing does not depend on the order.
 *
 * Amounts are integer satang throughout; tag 54 is rendered with exactly two
 * decimals ("4.22", "100.00") and parsed back without floating point.
 */

import { formatAmount } from '#core/money'

/** Application id of PromptPay credit transfer (tag 29). */
export const PROMPTPAY_AID = 'A000000677010111'
/** Application id of PromptPay bill payment (tag 30). */
export const BILL_PAYMENT_AID = 'A000000677010112'

const CURRENCY_THB = '764'
const COUNTRY_TH = 'TH'
const CRC_TAG = '63'

/** Top-level tags whose value is itself a TLV list. */
const TEMPLATE_TAGS = new Set(['29', '30', '62'])

/** Banks limit bill-payment references to 20 characters of A-Z and 0-9. */
const REFERENCE_PATTERN = /^[A-Z0-9]{1,20}$/
const BILLER_ID_PATTERN = /^\d{15}$/
/** EMV tag 54 holds at most 13 characters. */
const MAX_AMOUNT_LENGTH = 13
const AMOUNT_PATTERN = /^(\d{1,10})(?:\.(\d{1,2}))?$/

export type ProxyType = 'mobile' | 'nationalId' | 'eWallet' | 'bankAccount'

const PROXY_SUBTAG: Record<ProxyType, string> = {
  mobile: '01',
  nationalId: '02',
  eWallet: '03',
  bankAccount: '04',
}

/** Thrown for invalid input to the generators and for malformed payloads. */
export class PromptPayQrError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PromptPayQrError'
  }
}

export interface EmvField {
  /** Two-digit tag, e.g. "29". */
  tag: string
  /** Length in characters, as written in the payload. */
  length: number
  value: string
  /** Nested fields for the template tags 29, 30 and 62. */
  subFields?: EmvField[]
}

export interface ParsedEmv {
  /** Top-level fields in payload order, the CRC field (63) included. */
  fields: EmvField[]
  /** The CRC written in tag 63 (as written), or null when there is none. */
  crc: string | null
  /** The CRC computed over the payload up to and including "6304"; null without tag 63. */
  computedCrc: string | null
  crcValid: boolean
}

export interface ParseOptions {
  /**
   * When true (the default) a missing or wrong CRC throws PromptPayQrError.
   * When false the tree is returned anyway with `crcValid: false`.
   */
  strict?: boolean
}

export interface PromptPayDescription {
  type: 'promptpay' | 'billpayment'
  /** For tag 29: which proxy sub-tag is present; null for bill payments. */
  proxyType: ProxyType | null
  /** For tag 29: the proxy exactly as in the payload (mobile as "0066" + 9 digits). */
  proxy: string | null
  billerId: string | null
  ref1: string | null
  ref2: string | null
  amountSatang: number | null
  /** Tag 01 is "12" (dynamic, one-off) rather than "11" (static, reusable). */
  dynamic: boolean
  crcValid: boolean
}

/**
 * CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)
 * of the UTF-8 bytes of `text`, as 4 uppercase hex digits. "123456789" → "29B1".
 */
export function crc16ccittFalse(text: string): string {
  let crc = 0xffff
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0')
}

function tlv(tag: string, value: string): string {
  if (value.length > 99) {
    throw new PromptPayQrError(`Value of tag ${tag} is longer than 99 characters`)
  }
  return `${tag}${String(value.length).padStart(2, '0')}${value}`
}

function formatEmvAmount(amountSatang: number): string {
  if (!Number.isSafeInteger(amountSatang) || amountSatang <= 0) {
    throw new PromptPayQrError(`amountSatang must be a positive integer, got ${amountSatang}`)
  }
  const text = formatAmount(amountSatang)
  if (text.length > MAX_AMOUNT_LENGTH) {
    throw new PromptPayQrError(`Amount ${text} does not fit the 13 characters of tag 54`)
  }
  return text
}

/** Assembles 00, 01, account template, 58, 53, [54], 63. */
function buildPayload(accountTemplate: string, amountSatang: number | undefined): string {
  const hasAmount = amountSatang !== undefined
  let payload =
    tlv('00', '01') +
    tlv('01', hasAmount ? '12' : '11') +
    accountTemplate +
    tlv('58', COUNTRY_TH) +
    tlv('53', CURRENCY_THB)
  if (hasAmount) payload += tlv('54', formatEmvAmount(amountSatang))
  payload += `${CRC_TAG}04`
  return payload + crc16ccittFalse(payload)
}

/**
 * Classifies a PromptPay proxy from its digits (anything else is stripped):
 * 10 digits starting with 0 is a Thai mobile number, also accepted in the
 * international form 66 + 9 digits; it is written as "0066" + the last 9
 * digits. 13 digits is a national or tax id, 15 digits an e-wallet id.
 */
export function normalizeProxy(proxy: string): { proxyType: ProxyType; value: string } {
  const digits = proxy.replace(/\D/g, '')
  if (/^0\d{9}$/.test(digits) || /^66\d{9}$/.test(digits)) {
    return { proxyType: 'mobile', value: `0066${digits.slice(-9)}` }
  }
  if (digits.length === 13) return { proxyType: 'nationalId', value: digits }
  if (digits.length === 15) return { proxyType: 'eWallet', value: digits }
  throw new PromptPayQrError(
    'PromptPay proxy must be a mobile number (0 + 9 digits), a 13-digit national/tax id or a 15-digit e-wallet id'
  )
}

/**
 * Tag 29 (PromptPay credit transfer) payload. Without an amount the QR is
 * static (01 = "11") and the payer types the amount; with one it is dynamic
 * (01 = "12") and tag 54 carries it.
 */
export function promptPayPayload(options: { proxy: string; amountSatang?: number }): string {
  const { proxyType, value } = normalizeProxy(options.proxy)
  const template = tlv('29', tlv('00', PROMPTPAY_AID) + tlv(PROXY_SUBTAG[proxyType], value))
  return buildPayload(template, options.amountSatang)
}

function assertReference(name: string, value: string) {
  if (!REFERENCE_PATTERN.test(value)) {
    throw new PromptPayQrError(`${name} must be 1-20 characters of A-Z and 0-9`)
  }
}

/**
 * Tag 30 (bill payment) payload: biller id (15 digits: tax id + 2-digit
 * suffix) and references that the bank reports back with the payment.
 */
export function billPaymentPayload(options: {
  billerId: string
  ref1: string
  ref2?: string
  amountSatang?: number
}): string {
  if (!BILLER_ID_PATTERN.test(options.billerId)) {
    throw new PromptPayQrError('billerId must be exactly 15 digits')
  }
  assertReference('ref1', options.ref1)
  if (options.ref2 !== undefined) assertReference('ref2', options.ref2)
  let inner = tlv('00', BILL_PAYMENT_AID) + tlv('01', options.billerId) + tlv('02', options.ref1)
  if (options.ref2 !== undefined) inner += tlv('03', options.ref2)
  return buildPayload(tlv('30', inner), options.amountSatang)
}

function parseTlv(text: string, where: string): EmvField[] {
  const fields: EmvField[] = []
  let index = 0
  while (index < text.length) {
    const header = text.slice(index, index + 4)
    if (!/^\d{4}$/.test(header)) {
      throw new PromptPayQrError(`Malformed TLV header at ${where}offset ${index}`)
    }
    const tag = header.slice(0, 2)
    const length = Number(header.slice(2))
    const value = text.slice(index + 4, index + 4 + length)
    if (value.length !== length) {
      throw new PromptPayQrError(`Tag ${where}${tag} runs past the end of the payload`)
    }
    fields.push({ tag, length, value })
    index += 4 + length
  }
  return fields
}

/**
 * Parses an EMV QR payload into its TLV tree (sub-fields for 29, 30 and 62)
 * and checks the CRC in tag 63, which must be the last field with length 04.
 *
 * CRC policy: by default (`strict: true`) a missing or wrong CRC throws a
 * PromptPayQrError, so a returned tree always has `crcValid: true`. With
 * `{ strict: false }` the tree is returned with `crcValid: false` instead.
 * A structurally malformed payload always throws. Hex digits of the CRC are
 * compared case-insensitively.
 */
export function parseEmv(payload: string, options: ParseOptions = {}): ParsedEmv {
  const strict = options.strict ?? true
  const fields = parseTlv(payload, '')
  for (const field of fields) {
    if (TEMPLATE_TAGS.has(field.tag)) field.subFields = parseTlv(field.value, `${field.tag}.`)
  }

  const last = fields.at(-1)
  const hasCrc = last?.tag === CRC_TAG && last.length === 4
  const crc = hasCrc ? last.value : null
  const computedCrc = hasCrc ? crc16ccittFalse(payload.slice(0, -4)) : null
  const crcValid = crc !== null && crc.toUpperCase() === computedCrc

  if (strict && !crcValid) {
    throw new PromptPayQrError(
      crc === null
        ? 'Payload has no CRC field (63) at its end'
        : `CRC mismatch: payload says ${crc}, computed ${computedCrc}`
    )
  }
  return { fields, crc, computedCrc, crcValid }
}

/** Value of a top-level field, or of a sub-field of a template field. */
export function emvValue(parsed: ParsedEmv, tag: string, subTag?: string): string | undefined {
  const field = parsed.fields.find((f) => f.tag === tag)
  if (subTag === undefined) return field?.value
  return field?.subFields?.find((f) => f.tag === subTag)?.value
}

/** "4.22" → 422, "100" → 10000; never through floating point. */
function parseEmvAmount(text: string): number {
  const match = AMOUNT_PATTERN.exec(text)
  if (!match) throw new PromptPayQrError(`Malformed amount in tag 54: ${text}`)
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
}

/**
 * Summarises a PromptPay payload (tag 29 or tag 30). Takes the same CRC
 * policy as parseEmv: strict by default (throws on a bad CRC, so
 * `crcValid` is true); pass `{ strict: false }` to inspect a payload whose
 * CRC is wrong. Throws when the payload is neither a PromptPay transfer nor
 * a bill payment, or is not in Thai Baht.
 */
export function describePromptPay(
  payload: string,
  options: ParseOptions = {}
): PromptPayDescription {
  const parsed = parseEmv(payload, options)
  const get = (tag: string, subTag?: string) => emvValue(parsed, tag, subTag)

  const currency = get('53')
  if (currency !== CURRENCY_THB) {
    throw new PromptPayQrError(`Currency (tag 53) is ${currency ?? 'missing'}, not 764 (THB)`)
  }
  const amountText = get('54')
  const common = {
    amountSatang: amountText === undefined ? null : parseEmvAmount(amountText),
    dynamic: get('01') === '12',
    crcValid: parsed.crcValid,
  }

  const hasTransfer = get('29') !== undefined
  const hasBill = get('30') !== undefined
  if (hasTransfer && hasBill) {
    throw new PromptPayQrError('Payload has both tag 29 and tag 30')
  }

  if (hasTransfer) {
    if (get('29', '00') !== PROMPTPAY_AID) {
      throw new PromptPayQrError('Tag 29 does not carry the PromptPay application id')
    }
    for (const [proxyType, subTag] of Object.entries(PROXY_SUBTAG)) {
      const proxy = get('29', subTag)
      if (proxy !== undefined) {
        return {
          type: 'promptpay',
          proxyType: proxyType as ProxyType,
          proxy,
          billerId: null,
          ref1: null,
          ref2: null,
          ...common,
        }
      }
    }
    throw new PromptPayQrError('Tag 29 has no proxy (sub-tags 01-04)')
  }

  if (hasBill) {
    if (get('30', '00') !== BILL_PAYMENT_AID) {
      throw new PromptPayQrError('Tag 30 does not carry the bill payment application id')
    }
    const billerId = get('30', '01')
    const ref1 = get('30', '02')
    if (billerId === undefined || ref1 === undefined) {
      throw new PromptPayQrError('Tag 30 needs a biller id (01) and ref1 (02)')
    }
    return {
      type: 'billpayment',
      proxyType: null,
      proxy: null,
      billerId,
      ref1,
      ref2: get('30', '03') ?? null,
      ...common,
    }
  }

  throw new PromptPayQrError('Payload is neither a PromptPay transfer (29) nor a bill payment (30)')
}
