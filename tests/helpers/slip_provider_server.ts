/**
 * SlipOK and EasySlip as the gateway meets them, in the test process: one
 * HTTPS server (a self-signed certificate for 127.0.0.1 / localhost, on a
 * port the OS picks) answering both providers' check-slip routes as their
 * documentation describes. Each transaction reference gets a scripted
 * answer; an unscripted one is the provider's "not found". Requests are
 * recorded; a wrong key is refused the way the provider refuses it.
 */

import { createServer, type Server } from 'node:https'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { type DateTime } from 'luxon'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { parseSlipText } from '#slips/mini_qr'

export const SLIPOK_KEY = 'SLIPOK-test-key-5f1c9e'
export const SLIPOK_BRANCH = '48213'
export const EASYSLIP_KEY = '8c1d6a2e-0b7f-4e3a-9d51-easyslip-test'

/** A scripted answer: JSON with a status, a body that is not JSON, no answer, or a cut connection. */
export type ProviderReply =
  { status: number; json: unknown } | { status: number; raw: string } | 'timeout' | 'drop'

export type ProviderName = 'slipok' | 'easyslip'

export interface ProviderRequest {
  provider: ProviderName
  path: string
  headers: IncomingHttpHeaders
  body: Record<string, any>
  transRef: string | null
  reply: ProviderReply
}

/** The transfer a provider knows: what its answers carry. */
export interface ProviderTransfer {
  transRef: string
  /** satang */
  amount: number
  /** The receiving account as the provider shows it (masked). */
  receiverAccount: string | null
  receiverProxy?: string | null
  at: DateTime
  ref1?: string | null
  sendingBank?: string
}

export class SlipProviderServer {
  requests: ProviderRequest[] = []
  certificate = ''
  #server?: Server
  #port = 0
  #sockets = new Set<Socket>()
  #script = new Map<string, ProviderReply[]>()

  async start() {
    const pair = await generateSelfSignedCertificate()
    this.certificate = pair.cert
    this.#server = createServer({ cert: pair.cert, key: pair.key }, (req, res) =>
      this.#handle(req, res)
    )
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket)
      socket.once('close', () => this.#sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.#port = (this.#server.address() as AddressInfo).port
    return this
  }

  /** SLIPOK_URL: the check-slip route without the branch id. */
  get slipOkUrl() {
    return `https://127.0.0.1:${this.#port}/api/line/apikey`
  }

  /** EASYSLIP_URL. */
  get easySlipUrl() {
    return `https://127.0.0.1:${this.#port}/v2/verify/bank`
  }

  /**
   * The provider's answers to the next checks of `transRef`, in order (the
   * last one repeats).
   */
  script(provider: ProviderName, transRef: string, ...replies: ProviderReply[]) {
    this.#script.set(`${provider}:${transRef}`, replies)
  }

  requestsFor(provider: ProviderName, transRef?: string) {
    return this.requests.filter(
      (request) =>
        request.provider === provider && (transRef === undefined || request.transRef === transRef)
    )
  }

  reset() {
    this.requests = []
    this.#script.clear()
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise((resolve) => this.#server?.close(resolve))
  }

  #handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      let body: Record<string, any> = {}
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {}
      const path = req.url ?? ''
      const provider: ProviderName = path.startsWith('/v2/') ? 'easyslip' : 'slipok'
      const qr = provider === 'slipok' ? body.data : body.payload
      const parsed = typeof qr === 'string' ? parseSlipText(qr) : null
      const transRef = parsed?.kind === 'slip' ? parsed.transRef : null
      const reply = this.#reply(provider, req, path, transRef)
      this.requests.push({ provider, path, headers: req.headers, body, transRef, reply })
      if (reply === 'timeout') return // held until the client gives up
      if (reply === 'drop') {
        req.socket.destroy()
        return
      }
      if ('raw' in reply) {
        res.writeHead(reply.status, { 'content-type': 'text/html' })
        res.end(reply.raw)
        return
      }
      res.writeHead(reply.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(reply.json))
    })
  }

  #reply(
    provider: ProviderName,
    req: IncomingMessage,
    path: string,
    transRef: string | null
  ): ProviderReply {
    if (provider === 'slipok') {
      if (path !== `/api/line/apikey/${SLIPOK_BRANCH}`) return slipOkError(1001)
      if (req.headers['x-authorization'] !== SLIPOK_KEY) return slipOkError(1002)
      if (!transRef) return slipOkError(1000)
    } else {
      if (path !== '/v2/verify/bank') return easySlipError('NOT_FOUND')
      if (!req.headers.authorization) return easySlipError('MISSING_API_KEY')
      if (req.headers.authorization !== `Bearer ${EASYSLIP_KEY}`) {
        return easySlipError('INVALID_API_KEY')
      }
      if (!transRef) return easySlipError('VALIDATION_ERROR')
    }
    const replies = this.#script.get(`${provider}:${transRef}`)
    if (!replies || replies.length === 0) {
      return provider === 'slipok' ? slipOkError(1011) : easySlipError('SLIP_NOT_FOUND')
    }
    return replies.length > 1 ? replies.shift()! : replies[0]
  }
}

export async function startSlipProviderServer() {
  return new SlipProviderServer().start()
}

/** How the providers mask a 10-digit receiving account: `xxx-x-x1234-x`. */
export function maskedAccount(accountNo: string) {
  return `xxx-x-x${accountNo.slice(5, 9)}-x`
}

/** Baht as the providers write it: a JSON number. */
const baht = (satang: number) => satang / 100

/** SlipOK's `data` for a transfer (its "Check Slip Response"). */
export function slipOkData(transfer: ProviderTransfer) {
  const at = transfer.at.setZone('UTC+7')
  return {
    success: true,
    message: '✅',
    rqUID: `RQ${transfer.transRef.slice(-8)}`,
    language: 'TH',
    transRef: transfer.transRef,
    sendingBank: transfer.sendingBank ?? '004',
    receivingBank: '004',
    transDate: at.toFormat('yyyyLLdd'),
    transTime: at.toFormat('HH:mm:ss'),
    transTimestamp: at.toUTC().toISO(),
    sender: {
      displayName: 'นาย สมชาย ใ',
      name: 'MR. SOMCHAI J',
      proxy: { type: null, value: null },
      account: { type: 'BANKAC', value: 'xxx-x-x7890-x' },
    },
    receiver: {
      displayName: 'บจก. ตัวอย่าง',
      name: 'EXAMPLE CO',
      proxy: {
        type: transfer.receiverProxy ? 'MSISDN' : null,
        value: transfer.receiverProxy ?? null,
      },
      account: { type: 'BANKAC', value: transfer.receiverAccount },
    },
    amount: baht(transfer.amount),
    paidLocalAmount: baht(transfer.amount),
    paidLocalCurrency: '764',
    countryCode: 'TH',
    transFeeAmount: 0,
    ref1: transfer.ref1 ?? '',
    ref2: '',
    ref3: '',
    toMerchantId: '',
  }
}

export function slipOkSuccess(transfer: ProviderTransfer): ProviderReply {
  return { status: 200, json: { success: true, data: slipOkData(transfer) } }
}

const SLIPOK_STATUS: Record<number, number> = { 1001: 404, 1002: 401, 1003: 403, 1004: 403 }
const SLIPOK_MESSAGES: Record<number, string> = {
  1000: 'กรุณาใส่ข้อมูล QR Code ให้ครบใน field data, files หรือ url',
  1001: 'ไม่พบข้อมูลสาขา กรุณาตรวจสอบไอดีสาขา',
  1002: 'Authorization Header ไม่ถูกต้อง',
  1003: 'Package ของคุณหมดอายุแล้ว',
  1004: 'Package ของคุณใช้ครบโควต้าแล้ว',
  1005: 'ไฟล์ไม่ใช่ไฟล์ภาพ',
  1006: 'รูปภาพไม่ถูกต้อง',
  1007: 'รูปภาพไม่มี QR Code',
  1008: 'QR ดังกล่าวไม่ใช่ QR สำหรับการชำระเงิน',
  1009: 'ขออภัยในความไม่สะดวก ขณะนี้ข้อมูลธนาคารเกิดขัดข้องชั่วคราว',
  1010: 'เนื่องจากเป็นสลิปจากธนาคาร กรุณารอการตรวจสอบสลิปหลังการโอนประมาณ 5 นาที',
  1011: 'QR Code หมดอายุ หรือ ไม่มีรายการอยู่จริง',
  1012: 'สลิปซ้ำ สลิปนี้เคยส่งเข้ามาในระบบเมื่อ',
  1013: 'ยอดที่ส่งมาไม่ตรงกับยอดสลิป',
  1014: 'บัญชีผู้รับไม่ตรงกับบัญชีหลักของร้าน',
}

/** SlipOK's error answer: `{ code, message, data? }`. */
export function slipOkError(code: number, data?: unknown): ProviderReply {
  return {
    status: SLIPOK_STATUS[code] ?? 400,
    json: {
      code,
      message: SLIPOK_MESSAGES[code] ?? 'error',
      ...(data === undefined ? {} : { data }),
    },
  }
}

/** EasySlip v2's `rawSlip` for a transfer. */
export function easySlipRawSlip(transfer: ProviderTransfer) {
  return {
    payload: '',
    transRef: transfer.transRef,
    date: transfer.at.setZone('UTC+7').toISO(),
    countryCode: 'TH',
    amount: { amount: baht(transfer.amount), local: { amount: 0, currency: '' } },
    fee: 0,
    ref1: transfer.ref1 ?? '',
    ref2: '',
    ref3: '',
    sender: {
      bank: { id: transfer.sendingBank ?? '004', name: 'กสิกรไทย', short: 'KBANK' },
      account: {
        name: { th: 'นาย สมชาย ใ', en: 'MR. SOMCHAI J' },
        bank: { type: 'BANKAC', account: 'xxx-x-x7890-x' },
      },
    },
    receiver: {
      bank: { id: '004', name: 'กสิกรไทย', short: 'KBANK' },
      account: {
        name: { th: 'บจก. ตัวอย่าง', en: 'EXAMPLE CO' },
        ...(transfer.receiverAccount
          ? { bank: { type: 'BANKAC', account: transfer.receiverAccount } }
          : {}),
        ...(transfer.receiverProxy
          ? { proxy: { type: 'MSISDN', account: transfer.receiverProxy } }
          : {}),
      },
    },
  }
}

export function easySlipSuccess(
  transfer: ProviderTransfer,
  flags: { isDuplicate?: boolean; amountInOrder?: number } = {}
): ProviderReply {
  const amountInOrder = flags.amountInOrder ?? transfer.amount
  return {
    status: 200,
    json: {
      success: true,
      message: 'Bank slip verified successfully',
      data: {
        isDuplicate: flags.isDuplicate ?? false,
        matchedAccount: null,
        amountInOrder: baht(amountInOrder),
        amountInSlip: baht(transfer.amount),
        isAmountMatched: amountInOrder === transfer.amount,
        rawSlip: easySlipRawSlip(transfer),
      },
    },
  }
}

/** EasySlip v2's error codes with their HTTP status (its error-code reference). */
export const EASYSLIP_V2_STATUS: Record<string, number> = {
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  BRANCH_INACTIVE: 403,
  SERVICE_BANNED: 403,
  SERVICE_DELETED: 403,
  IP_NOT_ALLOWED: 403,
  QUOTA_EXCEEDED: 403,
  VALIDATION_ERROR: 400,
  URL_PROTOCOL_NOT_ALLOWED: 400,
  URL_INVALID_IP_RANGE: 400,
  IMAGE_URL_UNREACHABLE: 400,
  IMAGE_SIZE_TOO_LARGE: 400,
  INVALID_IMAGE_TYPE: 400,
  INVALID_IMAGE_FORMAT: 400,
  SLIP_NOT_FOUND: 404,
  NOT_FOUND: 404,
  API_SERVER_ERROR: 500,
  INTERNAL_SERVER_ERROR: 500,
}

/** EasySlip v1's error messages with their HTTP status. */
export const EASYSLIP_V1_STATUS: Record<string, number> = {
  invalid_payload: 400,
  invalid_image: 400,
  image_size_too_large: 400,
  unauthorized: 401,
  access_denied: 403,
  account_not_verified: 403,
  application_expired: 403,
  application_deactivated: 403,
  quota_exceeded: 403,
  slip_not_found: 404,
  qrcode_not_found: 404,
  server_error: 500,
  api_server_error: 500,
}

/** EasySlip v2's error answer: `{ success: false, error: { code, message } }`. */
export function easySlipError(code: string): ProviderReply {
  return {
    status: EASYSLIP_V2_STATUS[code] ?? 400,
    json: { success: false, error: { code, message: code.toLowerCase().replaceAll('_', ' ') } },
  }
}

/** EasySlip v1's error answer: `{ status, message }`. */
export function easySlipV1Error(message: string): ProviderReply {
  const status = EASYSLIP_V1_STATUS[message] ?? 400
  return { status, json: { status, message } }
}
