import { createServer, request, type Server } from 'node:https'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { testServers } from '#tests/helpers/servers'

/**
 * What the proxy does with one request:
 * - `forward`: passes it to the gateway and the answer back;
 * - `lose-answer`: passes it to the gateway, waits for the whole answer,
 *   then closes the client's connection without a byte of it (the request
 *   ran; its answer was lost: the client sees "socket hang up");
 * - `{ delayMs }`: passes it on at once but holds the answer this long (a
 *   client with a shorter timeout gives up first);
 * - `{ status, headers?, body }`: answers itself; the gateway never sees it.
 */
export type ProxyStep =
  | 'forward'
  | 'lose-answer'
  | { delayMs: number }
  | { status: number; headers?: Record<string, string>; body: string }

export interface ProxiedRequest {
  path: string
  headers: IncomingHttpHeaders
  /** The raw body bytes, as the client sent them. */
  body: Buffer
  signature: string | undefined
  /** What the gateway answered, when the request reached it. */
  gatewayAnswer?: { status: number; text: string }
}

/**
 * An HTTPS man in the middle between a client and the test gateway (same test
 * certificate), recording every request's bytes and X-SIGNATURE and playing
 * network failures from a script; after the script, requests are forwarded.
 */
export class RecordingProxy {
  requests: ProxiedRequest[] = []
  #script: ProxyStep[] = []
  #server?: Server
  #sockets = new Set<Socket>()

  async start() {
    this.#server = createServer(
      { cert: testServers.certificate, key: testServers.key },
      (req, res) => void this.#handle(req, res)
    )
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket)
      socket.once('close', () => this.#sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    return this
  }

  get url() {
    return `https://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`
  }

  /** What the next requests get, in order; then `forward`. */
  script(steps: ProxyStep[]) {
    this.#script = [...steps]
    this.requests = []
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise((resolve) => this.#server?.close(resolve))
  }

  async #handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const signature = req.headers['x-signature']
    const record: ProxiedRequest = {
      path: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks),
      signature: typeof signature === 'string' ? signature : undefined,
    }
    this.requests.push(record)
    const step = this.#script.shift() ?? 'forward'

    if (typeof step === 'object' && 'status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers })
      res.end(step.body)
      return
    }
    let answer: Awaited<ReturnType<typeof forward>>
    try {
      answer = await forward(record)
    } catch (error) {
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`proxy: ${(error as Error).message}`)
      return
    }
    record.gatewayAnswer = { status: answer.status, text: answer.body.toString('utf8') }
    if (step === 'lose-answer') {
      req.socket.destroy()
      return
    }
    if (typeof step === 'object') await new Promise((resolve) => setTimeout(resolve, step.delayMs))
    if (req.socket.destroyed) return
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  }
}

function forward(record: ProxiedRequest) {
  const target = new URL(record.path, testServers.httpsUrl)
  const headers = { ...record.headers }
  delete headers.host
  delete headers.connection
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      const req = request(
        target,
        { method: 'POST', headers, ca: testServers.certificate, agent: false },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const rest = { ...res.headers }
            for (const hop of ['connection', 'keep-alive', 'transfer-encoding']) delete rest[hop]
            resolve({ status: res.statusCode ?? 0, headers: rest, body: Buffer.concat(chunks) })
          })
          res.on('error', reject)
        }
      )
      req.on('error', reject)
      req.end(record.body)
    }
  )
}

export async function startRecordingProxy() {
  return new RecordingProxy().start()
}
