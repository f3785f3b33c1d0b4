import {
  createServer as createHttpServer,
  ServerResponse,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { readFile } from 'node:fs/promises'
import { ensureDevelopmentCertificate } from '#core/tls_certificate'

type Handler = (req: IncomingMessage, res: ServerResponse) => any
type Refusal = { status: number; error: string; message: string }

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * A caller may pass X-Request-Id to correlate its own logs with ours; anything
 * that is not a short token is dropped so that the gateway generates one and
 * log lines cannot be forged through it.
 */
export function withSanitizedRequestId(handler: Handler): Handler {
  return (req, res) => {
    const incoming = req.headers['x-request-id']
    if (incoming !== undefined && (typeof incoming !== 'string' || !REQUEST_ID.test(incoming))) {
      delete req.headers['x-request-id']
    }
    return handler(req, res)
  }
}

/**
 * The merchant API's error envelope, for answers given before the app sees a
 * request (so without a request id: no log line would carry it).
 */
function envelope({ status, error, message }: Refusal) {
  const body = JSON.stringify({ code: status, error, success: false, message })
  return {
    body,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': String(Buffer.byteLength(body)),
      'Connection': 'close',
    },
  }
}

/**
 * Requests Node parses but the router cannot: an HTTP/1.1 request without
 * Host, or a path whose percent-encoding is not UTF-8 (the framework would
 * answer a bare text/plain 400). The query string is the endpoint's business.
 */
function malformedRequest(req: IncomingMessage): Refusal | undefined {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    return { status: 400, error: 'invalid-inputs', message: 'malformed HTTP request: no Host' }
  }
  try {
    decodeURI((req.url ?? '/').split('?')[0])
  } catch {
    return {
      status: 400,
      error: 'invalid-inputs',
      message: 'malformed request path: percent-encoding is not valid UTF-8',
    }
  }
}

/** Parser errors (Node's err.code) that have a more precise status than 400. */
const PARSER_REFUSALS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    error: 'request-header-fields-too-large',
    message: 'request headers exceed the 16 KB limit',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    error: 'payload-too-large',
    message: 'chunk extensions exceed the 16 KB limit',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    error: 'request-timeout',
    message: 'the request was not received in time',
  },
}

/**
 * After answering a malformed request, how long (at most) and how many bytes
 * (at most) of the rest of it are read and dropped before the connection is
 * cut. Enough for a client to finish writing a refused request of the largest
 * size the API takes (4 MiB body, oversized headers) and read the answer.
 */
const LINGER_MS = 5000
const LINGER_MAX_BYTES = 8 * 1024 * 1024

/** Connections answered by answerClientError: bytes read when the answer was written. */
const answered = new WeakMap<Duplex, number>()

function bytesRead(socket: Duplex) {
  return (socket as Duplex & { bytesRead?: number }).bytesRead ?? 0
}

/**
 * Bytes Node's HTTP parser refuses never become a request: answer them in the
 * envelope on the raw socket, as Node's own default does with a bare status
 * line. Nothing is written when the peer is gone or an answer has already
 * started on this connection (it would corrupt it).
 *
 * The connection is then half-closed, not destroyed: the client may still be
 * writing the refused request (a 100 KB header arrives in several reads, and
 * the parser stops at 16 KB). Closing a socket with unread bytes, or receiving
 * bytes after it is closed, makes the kernel reset the connection, and a client
 * still writing gets EPIPE or ECONNRESET instead of the answer waiting for it.
 * So the rest is read and dropped (Node's parser reports the same error again
 * for every further chunk: those reports are ignored) until the client closes
 * its side, LINGER_MS pass or LINGER_MAX_BYTES more arrive.
 */
function answerClientError(error: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) {
  const answeredAt = answered.get(socket)
  if (answeredAt !== undefined) {
    if (bytesRead(socket) - answeredAt > LINGER_MAX_BYTES) socket.destroy()
    return
  }
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  const refusal = (error.code && PARSER_REFUSALS[error.code]) || {
    status: 400,
    error: 'invalid-inputs',
    message: `malformed HTTP request: ${error.reason ?? error.code ?? 'unreadable'}`,
  }
  const { body, headers } = envelope(refusal)
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  answered.set(socket, bytesRead(socket))
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${head.join('')}\r\n${body}`
  )
  const cut = setTimeout(() => socket.destroy(), LINGER_MS)
  socket.once('close', () => clearTimeout(cut))
  // The client is done: close once the answer is out (destroy would drop what is still queued).
  socket.once('end', () => {
    if (socket.writableFinished) socket.destroy()
    else socket.once('finish', () => socket.destroy())
  })
}

/**
 * Closes a keep-alive connection whose idle time ran out (Node emits
 * 'timeout' for it: `keepAliveTimeout` plus `keepAliveTimeoutBuffer`, see
 * config/app.ts). Node's own handling destroys it at once, in the timers
 * phase of the event loop, before the poll phase reads sockets: a request the
 * client sent just before that moment may already be waiting, unread, and
 * would be reset with the connection. The decision waits for setImmediate,
 * after that read: a connection whose next request came in is busy again and
 * is left to answer it (Node re-arms the idle timer after that answer).
 * Otherwise it is closed with a FIN the client's pool sees while the
 * connection sits idle, so that its next request goes on a new connection.
 * A timeout on a connection with a request in progress (not one the gateway
 * sets) is handled as Node does.
 */
function closeIdleConnection(socket: Socket) {
  const busy = () => (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  const current = busy()
  if (current) {
    if (current.listenerCount('timeout') === 0) socket.destroy()
    return
  }
  setImmediate(() => {
    if (!socket.destroyed && !busy()) socket.destroy()
  })
}

/**
 * The gateway's HTTP(S) server, for `npm start` and the test suite alike:
 * malformed requests get the envelope, and CONNECT (which Node hands to a
 * 'connect' listener or drops) goes through the app like any other method, so
 * it meets the same 405 or 404; the gateway tunnels nothing.
 */
export function createGatewayServer(
  handler: Handler,
  tls?: { cert: Buffer | string; key: Buffer | string }
): Server {
  const handle: Handler = withSanitizedRequestId((req, res) => {
    const refusal = malformedRequest(req)
    if (!refusal) return handler(req, res)
    const { body, headers } = envelope(refusal)
    res.writeHead(refusal.status, headers).end(body)
  })
  // Host is checked by `handle`, so that its absence gets the envelope too.
  const options = { requireHostHeader: false }
  const server = tls
    ? createHttpsServer({ ...tls, ...options, minVersion: 'TLSv1.2' }, handle)
    : createHttpServer(options, handle)
  server.on('clientError', answerClientError)
  server.on('timeout', closeIdleConnection)
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const res = new ServerResponse(req)
    res.shouldKeepAlive = false
    res.assignSocket(socket)
    res.once('finish', () => socket.destroySoon())
    handle(req, res)
  })
  return server
}

function flag(value: string | undefined, fallback: boolean) {
  if (value === undefined || value === '') return fallback
  return ['true', '1', 'yes', 'on'].includes(value.toLowerCase())
}

/**
 * Decides how the process listens, before the app boots (.env already loaded):
 * - TLS_CERT_PATH + TLS_KEY_PATH: HTTPS with that certificate;
 * - otherwise, outside production and unless TLS_SELF_SIGNED=false: HTTPS with
 *   a self-signed development certificate kept in tmp/tls;
 * - otherwise plain HTTP, for a deployment behind a TLS-terminating proxy listed
 *   in TRUSTED_PROXIES (the merchant API still refuses non-HTTPS calls).
 */
export async function createNodeServerFactory(appRoot: URL) {
  const certPath = process.env.TLS_CERT_PATH
  const keyPath = process.env.TLS_KEY_PATH
  const isProduction = process.env.NODE_ENV === 'production'
  const selfSigned = flag(process.env.TLS_SELF_SIGNED, !isProduction)

  if (!!certPath !== !!keyPath) {
    throw new Error('Set both TLS_CERT_PATH and TLS_KEY_PATH, or neither')
  }

  let tls: { cert: Buffer | string; key: Buffer | string } | undefined
  if (certPath && keyPath) {
    tls = { cert: await readFile(certPath), key: await readFile(keyPath) }
  } else if (selfSigned) {
    tls = await ensureDevelopmentCertificate(new URL('tmp/tls/', appRoot))
  }

  return (handler: Handler) => createGatewayServer(handler, tls)
}
