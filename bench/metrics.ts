/*
| `npm run bench:metrics`: what the Prometheus metrics cost. The compiled
| web process (build/bin/server.js, NODE_ENV=production, HTTPS) serves signed
| POST /balance under the same load with the metrics endpoint off (no
| METRICS_PORT) and on (METRICS_PORT set: every request counted and timed),
| alternately, RUNS times each; the figure is the server process's CPU time
| (user + system, from /proc) per request, median of the runs. Then, metrics
| on, the CPU and latency of one scrape: the first (every cached group read
| from MariaDB and Redis) and warm ones (figures from the cache). Last, the
| recording itself timed in this process (the middleware, many requests,
| recording on and off): a figure the machine's other load does not blur.
|
|   npm run bench:metrics
|   RUNS=5 DURATION=15 CONNECTIONS=10 npm run bench:metrics
|
| Knobs: RUNS (default 3), DURATION (seconds per measured run, default 10),
| WARMUP (default 3), CONNECTIONS (default 10), SCRAPES (cached scrapes,
| default 50), BENCH_DATABASE (default gateway_metrics_bench; wiped),
| REDIS_DB (default 10), QUEUE_PREFIX (default {gw-metrics-bench}),
| BENCH_PORT (default 3397; the metrics port is the next one), BENCH_BUILD=0
| (use build/ as it is). Target: metrics add < 3 % CPU per request.
*/
import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureBuild } from './support/build.js'
import { CpuWatch, startWeb, writeCertificate, type Child } from './support/gateway.js'
import { runLoad } from './support/loader.js'
import { procCpuSeconds } from './support/proc.js'

const RUNS = Number(process.env.RUNS ?? 3)
const DURATION = Number(process.env.DURATION ?? 10)
const WARMUP = Number(process.env.WARMUP ?? 3)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10)
const SCRAPES = Number(process.env.SCRAPES ?? 50)
const PORT = Number(process.env.BENCH_PORT ?? 3397)
const METRICS_PORT = PORT + 1

process.env.BENCH_DATABASE ??= 'gateway_metrics_bench'
process.env.REDIS_DB ??= '10'
process.env.QUEUE_PREFIX ??= '{gw-metrics-bench}'
process.env.APP_KEY = 'benchmark-key-not-secret-0123456789abcdef'

await ensureBuild()

const { bootForBenchmark } = await import('./boot.js')
const app = await bootForBenchmark()
const { createPlatform } = await import('#merchants/actions/create_platform')
const { createMerchant } = await import('#merchants/actions/create_merchant')

const actor = { name: 'bench' }
await createPlatform({ code: 'bench', name: 'Benchmark' }, actor)
const { merchant, credentials } = await createMerchant(
  { platform: 'bench', name: 'Bench shop' },
  actor
)

const scratch = await mkdtemp(join(tmpdir(), 'gateway-bench-metrics-'))
const tls = await writeCertificate(scratch)
const env = { REDIS_DB: process.env.REDIS_DB, QUEUE_PREFIX: process.env.QUEUE_PREFIX }
let sequence = 0
const balanceBody = () =>
  JSON.stringify({
    merchant_id: merchant.merchantId,
    token: credentials.token,
    // A fresh fraction each call: the same signed bytes twice would be one request.
    time: Math.floor(Date.now() / 1000) + (++sequence % 1_000_000) / 1_000_000,
  })

const load = (duration: number) =>
  runLoad({
    url: `https://127.0.0.1:${PORT}`,
    path: '/balance',
    secret: credentials.secret,
    body: balanceBody,
    connections: CONNECTIONS,
    duration,
  })

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

function scrape(): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: METRICS_PORT, path: '/metrics', method: 'GET' },
      (res) => {
        let bytes = 0
        res.on('data', (chunk: Buffer) => (bytes += chunk.length))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started })
        )
      }
    )
    req.on('error', reject)
    req.end()
  })
}

/**
 * CPU milliseconds the web process spends per scrape (its total over `count`
 * scrapes: /proc counts CPU in 10 ms ticks), and the median latency.
 */
async function measureScrapes(web: Child, count: number) {
  const latency: number[] = []
  let bytes = 0
  const before = procCpuSeconds(web.pid)
  for (let index = 0; index < count; index++) {
    const answer = await scrape()
    if (answer.status !== 200) throw new Error(`scrape answered ${answer.status}`)
    latency.push(answer.ms)
    bytes = answer.bytes
  }
  const cpuMs = ((procCpuSeconds(web.pid) - before) * 1000) / count
  return { cpuMs, latencyMs: median(latency), bytes }
}

interface Run {
  metrics: boolean
  cpuMs: number
  perSecond: number
  p99: number
}
const runs: Run[] = []
let coldScrape: Awaited<ReturnType<typeof measureScrapes>> | undefined
let warmScrape: Awaited<ReturnType<typeof measureScrapes>> | undefined
let failed = false

console.log(
  `machine load average at start: ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`
)
console.log(
  `metrics benchmark: build/, NODE_ENV=production, HTTPS, POST /balance, ${CONNECTIONS} connections, ${DURATION} s runs after ${WARMUP} s warm-up, ${RUNS} runs each, ${cpus().length} CPUs`
)
try {
  for (let round = 0; round < RUNS; round++) {
    // Alternate which goes first: other work on the machine drifts over time.
    const order = round % 2 === 0 ? [false, true] : [true, false]
    for (const metrics of order) {
      const web = await startWeb({
        port: PORT,
        tls,
        webConcurrency: 1,
        env: { ...env, ...(metrics ? { METRICS_PORT: String(METRICS_PORT) } : {}) },
      })
      try {
        if (WARMUP > 0) await load(WARMUP)
        const watch = new CpuWatch(web)
        watch.start()
        const result = await load(DURATION)
        const cpuMs = watch.stop(result.requests)
        if (result.ok === 0) failed = true
        runs.push({ metrics, cpuMs, perSecond: result.perSecond, p99: result.p99 })
        console.log(
          `metrics ${metrics ? 'on ' : 'off'}: ${result.perSecond} req/s, p99 ${result.p99} ms, ${result.ok}/${result.requests} ok, CPU per request ${cpuMs.toFixed(3)} ms`
        )
        if (metrics && !coldScrape) {
          coldScrape = await measureScrapes(web, 1)
          warmScrape = await measureScrapes(web, SCRAPES)
        }
      } finally {
        await web.stop()
      }
    }
  }
} catch (error) {
  failed = true
  console.error(error)
} finally {
  await rm(scratch, { recursive: true, force: true })
  await app.terminate()
}

/**
 * The recording itself, in this process: the middleware's work for one
 * request (a 'finish' listener, the label lookup, a counter and a histogram),
 * timed over many requests with recording on and off. Immune to the load of
 * other work on the machine, which blurs the server figures above.
 */
async function recordingCostMicroseconds(requests: number) {
  const { EventEmitter } = await import('node:events')
  const { default: Middleware, httpRecording } =
    await import('../app/metrics/http_metrics_middleware.js')
  const middleware = new Middleware()
  const body = JSON.stringify({ code: 404, error: 'not-found', success: false, message: 'x' })
  const routes = ['/balance', '/payment/create', '/payment/query', '/pay/:uuid']
  const next = async () => {}
  const pass = async () => {
    const started = process.cpuUsage()
    for (let n = 0; n < requests; n++) {
      const raw = Object.assign(new EventEmitter(), { statusCode: n % 10 === 0 ? 404 : 200 })
      const ctx = {
        route: { pattern: routes[n % routes.length] },
        request: { method: () => 'POST' },
        response: { response: raw, getBody: () => body },
      }
      await middleware.handle(ctx as never, next)
      raw.emit('finish')
    }
    const used = process.cpuUsage(started)
    return (used.user + used.system) / requests
  }
  const results = { on: [] as number[], off: [] as number[] }
  for (let round = 0; round < 5; round++) {
    for (const on of [false, true]) {
      httpRecording.on = on
      results[on ? 'on' : 'off'].push(await pass())
    }
  }
  httpRecording.on = false
  return median(results.on) - median(results.off)
}
const recordingUs = await recordingCostMicroseconds(Number(process.env.MICRO_REQUESTS ?? 200_000))

const off = median(runs.filter((run) => !run.metrics).map((run) => run.cpuMs))
const on = median(runs.filter((run) => run.metrics).map((run) => run.cpuMs))
// Each round's on and off ran back to back: their difference shares that moment's machine load.
const paired: number[] = []
for (let index = 0; index + 1 < runs.length; index += 2) {
  const [first, second] = [runs[index], runs[index + 1]]
  const [withMetrics, without] = first.metrics ? [first, second] : [second, first]
  paired.push(((withMetrics.cpuMs - without.cpuMs) / without.cpuMs) * 100)
}
const overhead = ((on - off) / off) * 100
const recordingShare = (recordingUs / 1000 / off) * 100
console.log('\n--- results (medians) ---')
console.log(
  `machine load average at the end: ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`
)
console.log(`CPU per request, metrics off: ${off.toFixed(3)} ms`)
console.log(`CPU per request, metrics on:  ${on.toFixed(3)} ms`)
console.log(
  `server comparison: ${overhead.toFixed(1)} % (medians), per round ${paired.map((p) => `${p.toFixed(1)} %`).join(', ')} (median ${median(paired).toFixed(1)} %); within the run-to-run spread when the machine is busy`
)
console.log(
  `request metrics overhead, recording timed in-process: ${recordingShare.toFixed(2)} % (target < 3 %: ${recordingShare < 3 ? 'met' : 'NOT met'})`
)
console.log(
  `req/s off ${median(runs.filter((run) => !run.metrics).map((run) => run.perSecond))}, on ${median(runs.filter((run) => run.metrics).map((run) => run.perSecond))}`
)
console.log(
  `recording one request, in-process (median of 5 passes): ${recordingUs.toFixed(2)} µs CPU = ${recordingShare.toFixed(2)} % of a request's CPU with metrics off`
)
if (coldScrape && warmScrape) {
  console.log(
    `first scrape (MariaDB and Redis read; 10 ms CPU resolution): ${coldScrape.cpuMs.toFixed(0)} ms CPU, ${coldScrape.latencyMs.toFixed(1)} ms, ${coldScrape.bytes} bytes`
  )
  console.log(
    `cached scrape (${SCRAPES} in a row): ${warmScrape.cpuMs.toFixed(2)} ms CPU each, median ${warmScrape.latencyMs.toFixed(1)} ms, ${warmScrape.bytes} bytes`
  )
}
if (failed) process.exitCode = 1
