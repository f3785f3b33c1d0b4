import { createServer, type Server } from 'node:https'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { safeEqual, signBody } from '#merchants/credentials'

/** A scripted answer: an HTTP status, or 'timeout' (never answer). */
export type ReceiverAnswer = number | 'timeout'

export interface ReceivedCallback {
  path: string
  headers: IncomingHttpHeaders
  /** The raw body bytes, as received. */
  body: Buffer
  signatureValid: boolean
  /** Header rule violations (User-Agent, Content-Type, Connection, X-Signature). */
  problems: string[]
  answer: ReceiverAnswer
}

export const EXPECTED_USER_AGENT = 'THB-Gateway-Callback/1.0'

/**
 * A merchant's callback endpoint over HTTPS (self-signed certificate for
 * 127.0.0.1 / localhost / ::1), as a careful merchant would write it: it reads
 * the raw body before parsing, verifies X-Signature in constant time with the
 * secret of the merchant named in the body, and checks the headers. Every
 * request is recorded; the answers follow a script, then `fallback`.
 * A request with a bad signature or headers is answered 401 / 400.
 */
export class CallbackReceiver {
  calls: ReceivedCallback[] = []
  /** TCP connections accepted, whether or not a request followed. */
  connections = 0
  certificate = ''
  #script: ReceiverAnswer[] = []
  #fallback: ReceiverAnswer = 200
  #secrets = new Map<string, string>()
  #server?: Server
  #port = 0
  #sockets = new Set<Socket>()

  async start() {
    const pair = await generateSelfSignedCertificate()
    this.certificate = pair.cert
    this.#server = createServer({ cert: pair.cert, key: pair.key }, (req, res) =>
      this.#handle(req, res)
    )
    this.#server.on('connection', (socket: Socket) => {
      this.connections++
      this.#sockets.add(socket)
      socket.once('close', () => this.#sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.#port = (this.#server.address() as AddressInfo).port
    return this
  }

  /** https://127.0.0.1:<port><path>; host 'localhost' to go through name resolution. */
  url(path = '/callback', host = '127.0.0.1') {
    return `https://${host}:${this.#port}${path}`
  }

  /** The secret to verify callbacks of this merchant with. */
  trust(merchantId: string, secret: string) {
    this.#secrets.set(merchantId, secret)
  }

  /** Answers for the next requests, in order; then `fallback` (default 200). */
  script(answers: ReceiverAnswer[], fallback: ReceiverAnswer = 200) {
    this.#script = [...answers]
    this.#fallback = fallback
  }

  reset() {
    this.calls = []
    this.connections = 0
    this.script([])
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise((resolve) => this.#server?.close(resolve))
  }

  #handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const problems: string[] = []
      if (req.method !== 'POST') problems.push(`method ${req.method}`)
      if (req.headers['user-agent'] !== EXPECTED_USER_AGENT) {
        problems.push(`user-agent ${req.headers['user-agent']}`)
      }
      if (req.headers['content-type'] !== 'application/json') {
        problems.push(`content-type ${req.headers['content-type']}`)
      }
      if (req.headers.connection !== 'close') problems.push(`connection ${req.headers.connection}`)

      // Raw bytes first; the body is parsed only to find whose secret to use.
      const signature = req.headers['x-signature']
      let merchantId: string | undefined
      try {
        merchantId = JSON.parse(body.toString('utf8')).merchant_id
      } catch {
        problems.push('body is not JSON')
      }
      const secret = merchantId ? this.#secrets.get(merchantId) : undefined
      const signatureValid =
        typeof signature === 'string' &&
        secret !== undefined &&
        safeEqual(signBody(secret, body), signature)
      if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) {
        problems.push(`x-signature ${signature}`)
      }

      let answer: ReceiverAnswer = this.#script.shift() ?? this.#fallback
      if (!signatureValid) answer = 401
      else if (problems.length > 0) answer = 400
      this.calls.push({
        path: req.url ?? '',
        headers: req.headers,
        body,
        signatureValid,
        problems,
        answer,
      })
      if (answer === 'timeout') return // hold the request until the client gives up
      res.writeHead(answer, { 'content-type': 'text/plain' })
      res.end(answer === 200 ? 'OK' : `status ${answer}`)
    })
  }
}

export async function startCallbackReceiver() {
  return new CallbackReceiver().start()
}
