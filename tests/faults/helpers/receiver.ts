import { createServer, type Server } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { timingSafeEqual } from 'node:crypto'
import { signature } from '#tests/faults/helpers/client'

export interface Delivery {
  platformOrderId: string
  status: string
  signatureValid: boolean
}

/**
 * The merchants' callback endpoint (HTTPS, the run's certificate): verifies
 * X-Signature over the raw body with the secret of the merchant named in it,
 * answers 200 and counts deliveries per (platform_order_id, status).
 */
export class CallbackReceiver {
  deliveries: Delivery[] = []
  #secrets = new Map<string, string>()
  #server?: Server
  #sockets = new Set<Socket>()
  port = 0

  constructor(private tls: { cert: string; key: string }) {}

  async start() {
    this.#server = createServer(this.tls, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        let body: any = {}
        try {
          body = JSON.parse(raw.toString('utf8'))
        } catch {}
        const secret = this.#secrets.get(body.merchant_id)
        const given = String(req.headers['x-signature'] ?? '')
        const expected = secret ? signature(secret, raw.toString('utf8')) : ''
        const signatureValid =
          given.length === expected.length &&
          expected.length > 0 &&
          timingSafeEqual(Buffer.from(given), Buffer.from(expected))
        this.deliveries.push({
          platformOrderId: String(body.platform_order_id),
          status: String(body.status),
          signatureValid,
        })
        res.writeHead(signatureValid ? 200 : 401, { 'content-type': 'text/plain' })
        res.end(signatureValid ? 'OK' : 'bad signature')
      })
    })
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket)
      socket.once('close', () => this.#sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.port = (this.#server.address() as AddressInfo).port
    return this
  }

  get url() {
    return `https://127.0.0.1:${this.port}/callback`
  }

  trust(merchantId: string, secret: string) {
    this.#secrets.set(merchantId, secret)
  }

  /** Deliveries with a valid signature for each platform_order_id, by status. */
  byOrder() {
    const result = new Map<string, Map<string, number>>()
    for (const delivery of this.deliveries) {
      if (!delivery.signatureValid) continue
      const statuses = result.get(delivery.platformOrderId) ?? new Map<string, number>()
      statuses.set(delivery.status, (statuses.get(delivery.status) ?? 0) + 1)
      result.set(delivery.platformOrderId, statuses)
    }
    return result
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise((resolve) => this.#server?.close(resolve))
  }
}
