/**
 * The "mini-QR" printed on Thai mobile-banking transfer slips, in one place:
 * building it (the sandbox bank's slips) and reading the text a QR decoder
 * found in an uploaded slip.
 *
 * Layout (TLV like PromptPay: 2-digit tag, 2-digit length, value):
 * tag 00 holds sub 00 "000001" (API id), sub 01 the sending bank's 3-digit
 * code, sub 02 the transaction reference (transRef); tag 51 "TH"; tag 91 "04"
 * + CRC-16/CCITT-FALSE over everything up to and including "9104".
 *
 * The QR carries only the sending bank and the transRef: amount, receiver
 * and transfer time come from a verification lookup. TrueMoney wallet slips
 * use a variant: tag 00 holds sub 00 "01", sub 01 "01", sub 02 event type,
 * sub 03 transaction id, sub 04 date (ddMMyyyy); no tag 51; lower-case CRC.
 */

import { DateTime } from 'luxon'
import { crc16ccittFalse, emvValue, parseEmv } from '#payments/promptpay_qr'

/** verification_msg when a QR was found but is not a readable slip QR (spec). */
export const QRCODE_ERROR = 'qrcode error'
/** verification_msg when the slip QR parsed but names no transfer date/time (spec). */
export const QRCODE_MISSING_TIME = 'qrcode error - missing transaction date/time'
/** verification_msg when no QR was detected in the image (spec). */
export const NO_QR = "can't read qr data."

export type SlipQrParse =
  | {
      kind: 'slip'
      /** 3-digit interbank code of the sending bank; empty for TrueMoney wallet slips, which name no bank. */
      sendingBank: string
      transRef: string
      /** yyyyMMdd when the QR carries one (TrueMoney does; bank slips do not). */
      transDate: string | null
      /** Which layout the QR uses. */
      issuer: 'bank' | 'truemoney'
    }
  /** A payment QR (tag 29/30 with the 0002 01 header), not a slip. */
  | { kind: 'promptpay' }
  | { kind: 'garbage' }

const SLIP_API_ID = '000001'
const CRC_TAG = '91'
const BANK_CODE_PATTERN = /^\d{3}$/
/** Printable ASCII without space: transRefs are compared byte for byte, never normalised. */
const REFERENCE_PATTERN = /^[\x21-\x7E]+$/
const CRC_PATTERN = /^[0-9A-Fa-f]{4}$/
/** Tag 00 holds 10 + 7 + 4 characters of headers around the transRef, in at most 99. */
const MAX_TRANS_REF_LENGTH = 78

interface Field {
  tag: string
  value: string
  /** Where the field's header starts in the text. */
  offset: number
}

function tlv(tag: string, value: string) {
  return `${tag}${String(value.length).padStart(2, '0')}${value}`
}

/**
 * The slip mini-QR text for a transfer from `sendingBankCode3` (3-digit
 * interbank code) with reference `transRef`.
 */
export function buildSlipMiniQr(sendingBankCode3: string, transRef: string): string {
  if (!BANK_CODE_PATTERN.test(sendingBankCode3)) {
    throw new Error('sendingBankCode3 must be a 3-digit interbank code')
  }
  if (!REFERENCE_PATTERN.test(transRef) || transRef.length > MAX_TRANS_REF_LENGTH) {
    throw new Error(`transRef must be 1-${MAX_TRANS_REF_LENGTH} printable characters`)
  }
  const body =
    tlv('00', tlv('00', SLIP_API_ID) + tlv('01', sendingBankCode3) + tlv('02', transRef)) +
    tlv('51', 'TH')
  return `${body}${CRC_TAG}04${crc16ccittFalse(`${body}${CRC_TAG}04`)}`
}

/**
 * Splits a TLV string; null when it is not one. With `allowShortCrc`, a
 * final tag 91 of declared length 04 may hold 1-3 characters: some bank apps
 * drop the CRC's leading zero(s).
 */
function splitTlv(text: string, allowShortCrc: boolean): Field[] | null {
  const fields: Field[] = []
  let index = 0
  while (index < text.length) {
    const header = text.slice(index, index + 4)
    if (!/^\d{4}$/.test(header)) return null
    const tag = header.slice(0, 2)
    const length = Number(header.slice(2))
    const value = text.slice(index + 4, index + 4 + length)
    if (value.length !== length) {
      const lastField = index + 4 + value.length === text.length
      if (!(allowShortCrc && lastField && tag === CRC_TAG && length === 4 && value.length > 0)) {
        return null
      }
      fields.push({ tag, value: value.padStart(4, '0'), offset: index })
      return fields
    }
    fields.push({ tag, value, offset: index })
    index += 4 + length
  }
  return fields
}

function valueOf(fields: Field[], tag: string): string | undefined {
  return fields.find((field) => field.tag === tag)?.value
}

/** Whether the text is a PromptPay / bill-payment QR (tag 00 "01", tag 29 or 30) with a valid CRC. */
function isPaymentQr(text: string): boolean {
  if (!text.startsWith('000201')) return false
  try {
    const parsed = parseEmv(text)
    return emvValue(parsed, '29') !== undefined || emvValue(parsed, '30') !== undefined
  } catch {
    return false
  }
}

/** ddMMyyyy → yyyyMMdd, or null when it is not a calendar date. */
function trueMoneyDate(text: string | undefined): string | null {
  if (text === undefined || !/^\d{8}$/.test(text)) return null
  const date = DateTime.fromFormat(text, 'ddMMyyyy', { zone: 'Asia/Bangkok' })
  return date.isValid ? date.toFormat('yyyyMMdd') : null
}

/**
 * Reads the text of a QR found in a slip image: a slip mini-QR (bank layout
 * or TrueMoney's) with a valid CRC in tag 91, a payment QR that someone
 * uploaded instead of a slip, or anything else (garbage).
 */
export function parseSlipText(text: string): SlipQrParse {
  const payload = text.trim()
  if (isPaymentQr(payload)) return { kind: 'promptpay' }

  const fields = splitTlv(payload, true)
  const last = fields?.at(-1)
  if (!fields || last?.tag !== CRC_TAG || !CRC_PATTERN.test(last.value)) return { kind: 'garbage' }
  // The CRC covers the payload up to and including its own header "9104".
  const computed = crc16ccittFalse(payload.slice(0, last.offset + 4))
  if (last.value.toUpperCase() !== computed) return { kind: 'garbage' }

  const template = valueOf(fields, '00')
  const sub = template === undefined ? null : splitTlv(template, false)
  if (!sub) return { kind: 'garbage' }

  if (valueOf(sub, '00') === SLIP_API_ID) {
    const sendingBank = valueOf(sub, '01') ?? ''
    const transRef = valueOf(sub, '02') ?? ''
    const country = valueOf(fields, '51')
    if (
      !BANK_CODE_PATTERN.test(sendingBank) ||
      !REFERENCE_PATTERN.test(transRef) ||
      (country !== undefined && country !== 'TH')
    ) {
      return { kind: 'garbage' }
    }
    return { kind: 'slip', sendingBank, transRef, transDate: null, issuer: 'bank' }
  }

  if (valueOf(sub, '00') === '01' && valueOf(sub, '01') === '01') {
    const transRef = valueOf(sub, '03') ?? ''
    const date = valueOf(sub, '04')
    const transDate = trueMoneyDate(date)
    if (!REFERENCE_PATTERN.test(transRef) || (date !== undefined && transDate === null)) {
      return { kind: 'garbage' }
    }
    return { kind: 'slip', sendingBank: '', transRef, transDate, issuer: 'truemoney' }
  }

  return { kind: 'garbage' }
}
