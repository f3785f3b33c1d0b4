/*
| The HTTP loader of `npm run bench`: autocannon, keep-alive connections over
| HTTPS, every request built and signed just before it is sent (a fresh body:
| the same signed bytes twice would get the first answer, not run).
*/
import autocannon from 'autocannon'
import { createHmac } from 'node:crypto'

export interface LoadOptions {
  /** https://127.0.0.1:port */
  url: string
  path: string
  /** The merchant secret that signs each body (X-SIGNATURE, HMAC-SHA256 hex). */
  secret: string
  /** Builds the JSON body of the n-th request (n counts from 0 across connections). */
  body: (n: number) => string
  connections: number
  /** Seconds; `amount` instead sends exactly that many requests. */
  duration?: number
  amount?: number
  /**
   * Requests per second offered over all connections, on a schedule; none:
   * each connection sends its next request as soon as the last is answered.
   * Latencies are then counted from when each request was due, not sent
   * (autocannon's correction for coordinated omission), so a slow answer
   * also counts against the requests it held back.
   */
  rate?: number
}

export interface LoadResult {
  requests: number
  ok: number
  perSecond: number
  p50: number
  p99: number
  errors: number
  timeouts: number
  statuses: Record<string, number>
  /** A few bodies of answers other than 200, to say why. */
  refusals: string[]
  seconds: number
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let sequence = 0
  const refusals: string[] = []
  const started = performance.now()
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.duration,
    amount: options.amount,
    overallRate: options.rate,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: options.path,
        setupRequest: (request) => {
          const body = options.body(sequence++)
          return {
            ...request,
            body,
            headers: {
              'content-type': 'application/json',
              'x-signature': createHmac('sha256', options.secret).update(body).digest('hex'),
            },
          }
        },
        onResponse: (status, body) => {
          if (status !== 200 && refusals.length < 5)
            refusals.push(`${status} ${body.slice(0, 200)}`)
        },
      },
    ],
  })
  const seconds = (performance.now() - started) / 1000
  const statuses: Record<string, number> = {}
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statuses[code] = stats.count ?? 0
  }
  const ok = statuses['200'] ?? 0
  return {
    requests: result.requests.total,
    ok,
    // Answered 200 per second of the run: refusals and errors do not count.
    perSecond: ok / (result.duration || seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    refusals,
    seconds,
  }
}
