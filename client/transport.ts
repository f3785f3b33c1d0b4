import { request, type Agent } from 'node:https'
import type { IncomingHttpHeaders } from 'node:http'
import type { NetworkFailure } from './errors.ts'

/** One HTTP exchange: an answer with its status, headers and raw body. */
export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** Why one attempt got no answer (the client turns it into a GatewayNetworkError). */
export class AttemptFailure extends Error {
  readonly failure: NetworkFailure
  readonly code: string | undefined

  constructor(failure: NetworkFailure, message: string, code?: string, cause?: unknown) {
    super(message, { cause })
    this.name = 'AttemptFailure'
    this.failure = failure
    this.code = code
  }
}

export interface AttemptOptions {
  agent?: Agent
  ca?: string | Buffer | Array<string | Buffer>
  rejectUnauthorized?: boolean
  timeoutMs: number
  maxAnswerBytes: number
  signal?: AbortSignal
}

const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|HOSTNAME_MISMATCH$)/

/** Which NetworkFailure a Node socket / TLS error is. */
export function classifyNetworkError(error: unknown): NetworkFailure {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : ''
  if (typeof code !== 'string') return 'other'
  if (code === 'ECONNRESET' && /socket hang up/i.test(message)) return 'socket-hang-up'
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') {
    return 'connection-reset'
  }
  if (code === 'ECONNREFUSED') return 'connection-refused'
  if (code === 'ETIMEDOUT') return 'timeout'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns'
  if (TLS_CODE.test(code)) return 'tls'
  return 'other'
}

/**
 * POSTs `body` once and reads the whole answer. `timeoutMs` bounds the whole
 * exchange (connection, TLS, request, answer). Rejects with AttemptFailure.
 */
export function postOnce(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  options: AttemptOptions
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let settled = false
    const finish = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      outcome()
    }
    const fail = (failure: AttemptFailure) => {
      finish(() => reject(failure))
      req.destroy()
    }
    const onAbort = () =>
      fail(new AttemptFailure('aborted', 'the call was aborted', undefined, options.signal?.reason))

    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(body.length) },
      agent: options.agent,
      ca: options.ca,
      rejectUnauthorized: options.rejectUnauthorized,
    })
    const timer = setTimeout(
      () =>
        fail(
          new AttemptFailure('timeout', `no answer within ${options.timeoutMs} ms`, 'ETIMEDOUT')
        ),
      options.timeoutMs
    )
    if (options.signal?.aborted) return onAbort()
    options.signal?.addEventListener('abort', onAbort, { once: true })

    req.on('error', (error: Error & { code?: string }) => {
      fail(new AttemptFailure(classifyNetworkError(error), error.message, error.code, error))
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxAnswerBytes) {
          fail(
            new AttemptFailure('other', `the answer is larger than ${options.maxAnswerBytes} bytes`)
          )
          return
        }
        chunks.push(chunk)
      })
      res.on('error', (error: Error & { code?: string }) => {
        fail(new AttemptFailure(classifyNetworkError(error), error.message, error.code, error))
      })
      res.on('close', () => {
        if (!res.complete) {
          fail(
            new AttemptFailure(
              'connection-reset',
              'the connection closed in the middle of the answer',
              'ECONNRESET'
            )
          )
        }
      })
      res.on('end', () => {
        finish(() =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          })
        )
      })
    })
    req.end(body)
  })
}
