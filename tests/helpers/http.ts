import { request as httpsRequest } from 'node:https'
import { request as httpRequest } from 'node:http'
import { testServers } from '#tests/helpers/servers'

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

export interface RawRequestOptions {
  method?: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** Source address on the loopback range, to play a client other than 127.0.0.1. */
  localAddress?: string
  /** Talk to the plain HTTP socket instead of the HTTPS one. */
  plainHttp?: boolean
  /** Another gateway process (HTTPS, same test certificate). */
  baseUrl?: string
}

/**
 * Sends exactly the given bytes (no re-serialisation, unlike most HTTP client
 * libraries) and returns the raw answer: signatures are over bytes.
 */
export function rawRequest(path: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const base = new URL(
    options.baseUrl ?? (options.plainHttp ? testServers.httpUrl : testServers.httpsUrl)
  )
  const body = options.body === undefined ? undefined : Buffer.from(options.body)
  const headers: Record<string, string | number> = { ...options.headers }
  if (body) headers['content-length'] = body.length

  const send = options.plainHttp ? httpRequest : httpsRequest
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: options.method ?? 'POST',
        headers,
        localAddress: options.localAddress,
        ca: options.plainHttp ? undefined : testServers.certificate,
        checkServerIdentity: () => undefined,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: any
          try {
            json = JSON.parse(text)
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      }
    )
    req.on('error', reject)
    if (body) req.write(body)
    req.end()
  })
}

/**
 * Sends `send` again (a fresh request each time) until it is answered other
 * than 200, for at most `withinMs` from now; returns that answer (or the last
 * one) and when it came. For changes made in one process that another must
 * honour within a bound.
 */
export async function refusedWithin(send: () => Promise<RawResponse>, withinMs = 1000) {
  const started = Date.now()
  for (;;) {
    const response = await send()
    const elapsed = Date.now() - started
    if (response.status !== 200 || elapsed > withinMs) return { response, elapsed }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
