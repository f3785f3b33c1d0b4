/*
| The HTTP loader of `npm run bench`: keep-alive connections over HTTPS, every
| request built and signed just before it is sent (a fresh body: the same
| signed bytes twice would get the first answer, not run). As fast as the
| connections go: autocannon. At a rate: requests due on an even schedule,
| sent whether or not the earlier ones were answered (runPaced).
*/
import autocannon from 'autocannon'
import { createHmac } from 'node:crypto'
import { Agent, request as httpsRequest } from 'node:https'

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
   * Requests per second offered over all connections, on an even schedule
   * (runPaced); none: each connection sends its next request as soon as the
   * last is answered. Latencies are then counted from when each request was
   * due, not sent, so a slow answer also counts against the requests it held
   * back.
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

/** One run of autocannon, its result not yet summarised (so that runs can be added up). */
interface Slice {
  raw: any
  refusals: string[]
  /** Seconds the run lasted, by autocannon's clock. */
  seconds: number
}

/** X-SIGNATURE as a merchant computes it: HMAC-SHA256 hex of the raw body. */
function signature(secret: string, body: string) {
  return createHmac('sha256', secret).update(body).digest('hex')
}

async function runSlice(options: LoadOptions, counter: { sequence: number }): Promise<Slice> {
  if (options.rate) throw new Error('a load at a rate runs alone (runLoad), not in slices')
  const refusals: string[] = []
  const started = performance.now()
  const raw = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.duration,
    amount: options.amount,
    timeout: 30,
    // The histograms, not their percentiles: slices are added up in summarize().
    skipAggregateResult: true,
    requests: [
      {
        method: 'POST',
        path: options.path,
        setupRequest: (request) => {
          const body = options.body(counter.sequence++)
          return {
            ...request,
            body,
            headers: {
              'content-type': 'application/json',
              'x-signature': signature(options.secret, body),
            },
          }
        },
        onResponse: (status, body) => {
          if (status !== 200 && refusals.length < 5)
            refusals.push(`${status} ${body.slice(0, 200)}`)
        },
      },
    ],
  } as autocannon.Options)
  return { raw, refusals, seconds: raw.duration || (performance.now() - started) / 1000 }
}

/** The slices of one load as one result: counts added, latencies from their merged histogram. */
function summarize(slices: Slice[], options: LoadOptions): LoadResult {
  // Exported by autocannon for adding up runs, though its types do not list it.
  const { aggregateResult } = autocannon as unknown as {
    aggregateResult(results: unknown[], options: object): autocannon.Result
  }
  const result = aggregateResult(
    slices.map((slice) => slice.raw),
    { url: options.url, connections: options.connections }
  )
  const seconds = slices.reduce((total, slice) => total + slice.seconds, 0)
  const statuses: Record<string, number> = {}
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statuses[code] = (stats as { count?: number }).count ?? 0
  }
  const ok = statuses['200'] ?? 0
  return {
    requests: result.requests.total,
    ok,
    // Answered 200 per second of the run: refusals and errors do not count.
    perSecond: ok / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    refusals: slices.flatMap((slice) => slice.refusals).slice(0, 5),
    seconds,
  }
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.rate) return runPaced(options as LoadOptions & { rate: number })
  return summarize([await runSlice(options, { sequence: 0 })], options)
}

/**
 * Requests offered at `rate` per second on an even schedule (request n is due
 * at n ÷ rate seconds), on at most `connections` keep-alive connections: a
 * request due while all of them wait for answers waits for the first free
 * one, and its latency is counted from when it was due (no coordinated
 * omission). autocannon's `overallRate` is not that: each of its connections
 * sends its share of a second's requests back to back as soon as the second
 * starts, then waits for the next second, so its "rate" is bursts of the
 * closed loop.
 */
async function runPaced(options: LoadOptions & { rate: number }): Promise<LoadResult> {
  const target = new URL(options.url)
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.connections,
    scheduling: 'fifo',
    rejectUnauthorized: false,
  })
  const total = Math.round(options.rate * (options.duration ?? 10))
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  const refusals: string[] = []
  let errors = 0
  let timeouts = 0
  let lastAnswer = 0

  const send = (n: number, due: number) =>
    new Promise<void>((resolve) => {
      const body = options.body(n)
      const done = (status: string, text = '') => {
        const now = performance.now()
        lastAnswer = Math.max(lastAnswer, now)
        statuses[status] = (statuses[status] ?? 0) + 1
        if (status === '200') latencies.push(now - due)
        else if (refusals.length < 5) refusals.push(`${status} ${text.slice(0, 200)}`)
        resolve()
      }
      const req = httpsRequest(
        {
          host: target.hostname,
          port: target.port,
          path: options.path,
          method: 'POST',
          agent,
          timeout: 30_000,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-signature': signature(options.secret, body),
          },
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => done(String(res.statusCode), text))
        }
      )
      req.on('timeout', () => {
        timeouts++
        req.destroy(new Error('timeout'))
      })
      req.on('error', () => {
        errors++
        resolve()
      })
      req.end(body)
    })

  const started = performance.now()
  const pending: Promise<void>[] = []
  await new Promise<void>((resolve) => {
    let sent = 0
    const pump = () => {
      const elapsed = performance.now() - started
      const due = Math.min(total, Math.floor((elapsed * options.rate) / 1000) + 1)
      while (sent < due) {
        pending.push(send(sent, started + (sent * 1000) / options.rate))
        sent++
      }
      if (sent >= total) return resolve()
      setTimeout(pump, Math.max(0, started + (sent * 1000) / options.rate - performance.now()))
    }
    pump()
  })
  await Promise.all(pending)
  agent.destroy()

  latencies.sort((a, b) => a - b)
  const percentile = (q: number) =>
    latencies.length
      ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
      : 0
  const ok = statuses['200'] ?? 0
  const seconds = Math.max(total / options.rate, (lastAnswer - started) / 1000)
  return {
    requests: total,
    ok,
    perSecond: ok / seconds,
    p50: Math.round(10 * percentile(0.5)) / 10,
    p99: Math.round(10 * percentile(0.99)) / 10,
    errors,
    timeouts,
    statuses,
    refusals,
    seconds,
  }
}

/** What to do around each load's slices (start and stop its CPU watches). */
export interface TurnHooks {
  before?: (load: 'first' | 'second') => void
  after?: (load: 'first' | 'second') => void
}

/**
 * Two loads taking turns, `slices` times: the first for its `duration`, then
 * the second for its own, and so on; each's result over its own slices. The
 * machine's speed drifts by a third within minutes here, by less within a few
 * seconds: two loads measured in turns see the same machine, where two runs
 * one after the other may not (docs/performance.md, "What is measured").
 */
export async function runInTurns(
  first: LoadOptions,
  second: LoadOptions,
  slices: number,
  hooks: TurnHooks = {}
) {
  const done = { first: [] as Slice[], second: [] as Slice[] }
  const counters = { first: { sequence: 0 }, second: { sequence: 0 } }
  for (let i = 0; i < slices; i++) {
    for (const load of ['first', 'second'] as const) {
      hooks.before?.(load)
      done[load].push(await runSlice(load === 'first' ? first : second, counters[load]))
      hooks.after?.(load)
    }
  }
  return { first: summarize(done.first, first), second: summarize(done.second, second) }
}
