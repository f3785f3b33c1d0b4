/*
| Slip upload benchmark: signed POST /slip/upload requests to the compiled web
| server (build/bin/server.js, NODE_ENV=production, HTTPS with certificate
| files), each for its own open payment order, with a photo of the order's
| sandbox slip that the statement verifies. For each image size and
| concurrency, on a freshly started server warmed up with WARMUP uploads, it
| prints uploads verified per second, p50/p95 latency, every answer's
| verification_msg, and the server's RSS (after warm-up, and its peak during
| the run from VmHWM), the increase counted in copies of the image, and what
| one more upload in flight adds to the peak.
|
|   npm run bench:slips                              (2 MB and 100 KB, concurrency 1 and 4, 20 s each)
|   CONCURRENCY=1,2,4 DURATION=30 SCENARIOS=2mb npm run bench:slips
|   COUNT=40 npm run bench:slips                     (exactly 40 uploads per run)
|   BENCH_TRANSPORT=proxy npm run bench:slips        (plain HTTP behind a trusted proxy)
|   BENCH_SERVER_FLAGS=--trace-gc npm run bench:slips  (Node flags for the server)
|
| `node ace build` runs first when build/ is missing or older than the
| sources (BENCH_BUILD=0 uses build/ as it is). Database: BENCH_DATABASE
| (default gateway_bench), wiped and migrated; Redis: REDIS_DB (default 2).
| Exits 1 when an upload is not answered 200 "amount ok, destination ok,
| transfer in time." or its slip is not stored as passed. docs/benchmarks.md
| explains the figures.
*/
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, createHmac } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DateTime as DateTimeValue } from 'luxon'
import { bootForBenchmark } from './boot.js'
import { BUILD, ensureBuild } from './support/build.js'
import { mib, percentile, procCpuSeconds, procStatus, resetPeakRss } from './support/proc.js'

const CONCURRENCY = (process.env.CONCURRENCY ?? '1,4').split(',').map(Number)
const DURATION_SECONDS = Number(process.env.DURATION ?? 20)
const COUNT = process.env.COUNT ? Number(process.env.COUNT) : undefined
/** Most slips drawn for a timed run (they are kept in this process's memory). */
const MAX_UPLOADS = Number(process.env.MAX_UPLOADS ?? 600)
/** Uploads, one at a time, that warm up each fresh server before its measured run. */
const WARMUP = Number(process.env.WARMUP ?? 5)
const PORT = Number(process.env.BENCH_PORT ?? 3398)
const TRANSPORT = process.env.BENCH_TRANSPORT === 'proxy' ? 'proxy' : 'https'
const VERIFIED = 'amount ok, destination ok, transfer in time.'

interface Scenario {
  name: string
  /** Exact size of every image: the photo's JPG, padded with JPG comments. */
  bytes: number
  width: number
  height: number
  noise: number
  blur: number
  quality: number
}

/**
 * Phone photos of sandbox slips, JPG: the largest image /slip/upload takes
 * (2,000,000 bytes, a noisy 1440 × 2560 photo) and a typical phone slip
 * (100,000 bytes, 1080 × 1920).
 */
const SCENARIOS: Record<string, Scenario> = {
  '2mb': {
    name: '2 MB photo',
    bytes: 2_000_000,
    width: 1440,
    height: 2560,
    noise: 24,
    blur: 0,
    quality: 98,
  },
  '100kb': {
    name: '100 KB phone slip',
    bytes: 100_000,
    width: 1080,
    height: 1920,
    noise: 4,
    blur: 0.6,
    quality: 76,
  },
}
const scenarios = (process.env.SCENARIOS ?? '2mb,100kb').split(',').map((key) => {
  const scenario = SCENARIOS[key.trim()]
  if (!scenario) throw new Error(`unknown scenario ${key}: ${Object.keys(SCENARIOS).join(', ')}`)
  return scenario
})

/** The server's certificate (HTTPS), trusted by the client. */
let certificate: string | undefined
/** Orders made so far: each gets its own amount. */
let amountSequence = 0
/** JPG quality that keeps each scenario's photos within its size. */
const calibrated = new Map<Scenario, number>()

// The seeding process and the server share the database, the Redis db and APP_KEY (merchant secrets).
process.env.REDIS_DB ??= '2'
process.env.QUEUE_PREFIX = '{gw-bench}'
process.env.APP_KEY = 'benchmark-key-not-secret-0123456789abcdef'

await ensureBuild()
const app = await bootForBenchmark()
const { default: db } = await import('@adonisjs/lucid/services/db')
const { DateTime } = await import('luxon')
const { v7: uuidv7 } = await import('uuid')
const { createPlatform } = await import('#merchants/actions/create_platform')
const { createMerchant } = await import('#merchants/actions/create_merchant')
const { default: DepositAccount } = await import('#payments/models/deposit_account')
const { newPlatformOrderId } = await import('#core/order_ids')
const { storeStatement } = await import('#reconciliation/statements')
const { generateSelfSignedCertificate } = await import('#core/tls_certificate')
const { sandboxSlip, sandboxTransRef, photoLike } = await import('#tests/helpers/slips')

const actor = { name: 'bench' }
await createPlatform({ code: 'bench', name: 'Benchmark' }, actor)
const { merchant, credentials } = await createMerchant(
  { platform: 'bench', name: 'Bench shop' },
  actor
)
merchant.merge({ depositGroup: 'bench', slipUploadWaitSeconds: 0 })
await merchant.save()
const account = await DepositAccount.create({
  depositGroup: 'bench',
  channel: 'qr',
  bank: 'KBANK',
  accountNo: '9000000001',
  accountName: 'Bench deposits',
  promptpayId: '0812345678',
  minAmount: 2000,
  maxAdjustment: 999,
  priority: 0,
  active: true,
})

const scratch = await mkdtemp(join(tmpdir(), 'gateway-bench-slips-'))
const results: RunResult[] = []
try {
  console.log(`slip upload benchmark: compiled server (build/), NODE_ENV=production, ${TRANSPORT}`)
  for (const scenario of scenarios) results.push(...(await runScenario(scenario)))
  printSummary(results)
} finally {
  await rm(scratch, { recursive: true, force: true })
  await app.terminate()
}
if (results.some((result) => result.failed)) {
  console.error('some uploads failed or were not verified')
  process.exitCode = 1
}

/* ----------------------------------------------------------------------------- */

/** An open order, its statement line and its slip image. */
interface Slip {
  platformOrderId: string
  orderId: number
  image: Buffer
}

interface Upload {
  orderId: number
  body: Buffer
  signature: string
}

interface Answer {
  status: number
  message: string
  ms: number
}

interface RunResult {
  scenario: Scenario
  concurrency: number
  uploads: number
  perSecond: number
  p50: number
  p95: number
  idleRss: number
  beforeRss: number
  peakRss: number
  failed: boolean
}

/**
 * One run per concurrency, each on a freshly started server: WARMUP uploads
 * one at a time (code loaded, the decoder's memory grown to this image
 * size), then the measured run. The runs upload the same slips to the same
 * orders: the previous run's slips are removed first, so every order is
 * open and has no slip when its upload arrives.
 */
async function runScenario(scenario: Scenario) {
  const warmSlips = await drawSlips(scenario, WARMUP)
  let pool: Slip[] = []
  let drawSeconds = 0
  const runs: RunResult[] = []
  for (const concurrency of CONCURRENCY) {
    await reopen([...warmSlips, ...pool])
    const server = await startServer()
    try {
      const idle = procStatus(server.pid)
      const warmAnswers = await sendAll(signedUploads(warmSlips), 1, Infinity)
      if (pool.length === 0) {
        // Enough slips for about 1.3 × DURATION at the one-at-a-time rate, first upload excluded.
        const warmMs = warmAnswers.slice(1).reduce((sum, answer) => sum + answer.ms, 0)
        const rate = (warmAnswers.length - 1) / Math.max(0.001, warmMs / 1000)
        const count =
          COUNT ?? Math.min(MAX_UPLOADS, Math.max(20, Math.ceil(rate * DURATION_SECONDS * 1.3)))
        const drawStarted = performance.now()
        pool = await drawSlips(scenario, count)
        drawSeconds = (performance.now() - drawStarted) / 1000
      }
      const uploads = signedUploads(pool)

      const before = procStatus(server.pid)
      const resetPeak = resetPeakRss(server.pid)
      const cpuBefore = procCpuSeconds(server.pid)
      let sampledPeak = before.rss
      const sampler = setInterval(() => {
        sampledPeak = Math.max(sampledPeak, procStatus(server.pid).rss)
      }, 20)
      const started = performance.now()
      const answers = await sendAll(
        uploads,
        concurrency,
        COUNT ? Infinity : DURATION_SECONDS * 1000
      )
      const seconds = (performance.now() - started) / 1000
      clearInterval(sampler)
      const after = procStatus(server.pid)
      const cpuSeconds = procCpuSeconds(server.pid) - cpuBefore
      const peak = resetPeak ? after.hwm : Math.max(sampledPeak, after.rss)

      const storedRow = await db
        .from('payment_slips')
        .whereIn(
          'payment_order_id',
          uploads.slice(0, answers.length).map((upload) => upload.orderId)
        )
        .where('verification_status', 'passed')
        .count('* as total')
        .first()
      const stored = Number(storedRow?.total ?? 0)
      const verified = answers.filter(isVerified).length
      const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b)
      const messages = new Map<string, number>()
      for (const answer of answers) {
        const key = `${answer.status} ${answer.message}`
        messages.set(key, (messages.get(key) ?? 0) + 1)
      }
      const increase = Math.max(0, peak - before.rss)
      const failures = [...warmAnswers, ...answers].filter((answer) => !isVerified(answer))

      console.log(``)
      console.log(
        `${scenario.name} (${scenario.bytes} bytes, ${scenario.width} × ${scenario.height} JPG), concurrency ${concurrency}`
      )
      console.log(
        `  uploads:          ${answers.length} in ${seconds.toFixed(1)} s, after ${warmAnswers.length} warm-up (${pool.length} slips drawn in ${drawSeconds.toFixed(0)} s)`
      )
      console.log(
        `  verified:         ${verified} answered "${VERIFIED}", ${stored} slips stored as passed`
      )
      for (const [message, total] of messages)
        console.log(`  answers:          ${total} × ${message}`)
      console.log(`  throughput:       ${(verified / seconds).toFixed(2)} uploads verified/s`)
      console.log(
        `  latency:          p50 ${percentile(latencies, 0.5).toFixed(0)} ms, p95 ${percentile(latencies, 0.95).toFixed(0)} ms, max ${(latencies.at(-1) ?? 0).toFixed(0)} ms`
      )
      console.log(
        `  server CPU:       ${((cpuSeconds * 1000) / Math.max(1, answers.length)).toFixed(0)} ms per upload`
      )
      console.log(
        `  server RSS:       ${mib(idle.rss)} MiB started, ${mib(before.rss)} MiB after warm-up, peak ${mib(peak)} MiB during the run (${resetPeak ? 'VmHWM' : 'sampled every 20 ms'})`
      )
      console.log(
        `  peak increase:    +${mib(increase)} MiB = ${(increase / scenario.bytes).toFixed(1)} × the image, ${(increase / scenario.bytes / concurrency).toFixed(1)} per concurrent upload`
      )
      for (const failure of failures.slice(0, 5)) {
        console.error(`  failed:           ${failure.status} ${failure.message}`)
      }

      runs.push({
        scenario,
        concurrency,
        uploads: answers.length,
        perSecond: verified / seconds,
        p50: percentile(latencies, 0.5),
        p95: percentile(latencies, 0.95),
        idleRss: idle.rss,
        beforeRss: before.rss,
        peakRss: peak,
        failed: failures.length > 0 || stored !== verified,
      })
    } finally {
      await server.stop()
    }
  }

  // What one more upload in flight adds to the peak of a server warmed up the same way.
  const [first, last] = [runs[0], runs.at(-1)!]
  if (last.concurrency > first.concurrency) {
    const perUpload = (last.peakRss - first.peakRss) / (last.concurrency - first.concurrency)
    console.log(
      `  per extra upload in flight (concurrency ${first.concurrency} → ${last.concurrency}): ${perUpload >= 0 ? '+' : ''}${(perUpload / 1024 / 1024).toFixed(1)} MiB = ${(perUpload / scenario.bytes).toFixed(1)} × the image`
    )
  }
  return runs
}

function isVerified(answer: Answer) {
  return answer.status === 200 && answer.message === VERIFIED
}

function printSummary(runs: RunResult[]) {
  console.log(``)
  console.log(
    `| Image | Concurrency | Uploads | Verified/s | p50 | p95 | RSS started | RSS after warm-up | Peak RSS | Peak increase |`
  )
  console.log(`|---|---|---|---|---|---|---|---|---|---|`)
  for (const run of runs) {
    const increase = run.peakRss - run.beforeRss
    console.log(
      `| ${run.scenario.name} | ${run.concurrency} | ${run.uploads} | ${run.perSecond.toFixed(2)} | ${run.p50.toFixed(0)} ms | ${run.p95.toFixed(0)} ms | ${mib(run.idleRss)} MiB | ${mib(run.beforeRss)} MiB | ${mib(run.peakRss)} MiB | +${mib(increase)} MiB (${(increase / run.scenario.bytes).toFixed(1)} × image) |`
    )
  }
}

/* --- orders, statement lines and slip images ----------------------------------- */

/**
 * `count` open orders, each with a statement line on the deposit account
 * naming its transfer's reference (stored, not matched: the order stays
 * open and its slip verifies against the line), and its slip photographed
 * at the scenario's size.
 */
async function drawSlips(scenario: Scenario, count: number): Promise<Slip[]> {
  const now = DateTime.utc()
  const orders = Array.from({ length: count }, () => {
    amountSequence += 1
    const amount = 10_000 + amountSequence * 100 // distinct: one slot each
    return {
      platform_order_id: newPlatformOrderId(merchant.orderPrefix, 'P', now),
      uuid: uuidv7(),
      merchant_id: merchant.id,
      merchant_order_id: `S${amountSequence}`,
      payment_type: 'QR',
      channel: 'qr',
      deposit_account_id: account.id,
      amount,
      transfer_amount: amount,
      slot_amount: amount,
      customer_bank: 'SCB',
      customer_account_name: 'Customer',
      customer_account_no: '1234567890',
      status: 'open',
      awaiting_review: false,
      order_at: now.minus({ minutes: 2 }).toJSDate(),
      expire_at: now.plus({ hours: 2 }).toJSDate(),
      created_at: now.minus({ minutes: 2 }).toJSDate(),
      updated_at: now.minus({ minutes: 2 }).toJSDate(),
    }
  })
  for (let start = 0; start < orders.length; start += 500) {
    await db.table('payment_orders').multiInsert(orders.slice(start, start + 500))
  }
  const ids = new Map<string, number>()
  const rows = await db
    .from('payment_orders')
    .whereIn(
      'platform_order_id',
      orders.map((order) => order.platform_order_id)
    )
    .select('id', 'platform_order_id')
  for (const row of rows) ids.set(row.platform_order_id, Number(row.id))

  const transferredAt = now.minus({ minutes: 1 })
  const transfers = orders.map((order) => ({ order, transRef: sandboxTransRef(transferredAt) }))
  await db.transaction((trx) =>
    storeStatement(trx, {
      account,
      layout: 'neutral',
      fileName: `bench-${amountSequence}.csv`,
      fileSha256: createHash('sha256')
        .update(`bench-${amountSequence}-${now.toISO()}`)
        .digest('hex'),
      lines: transfers.map(({ order, transRef }, index) => ({
        lineNumber: index + 1,
        lineAt: transferredAt.toJSDate(),
        direction: 'credit' as const,
        amount: order.transfer_amount,
        reference: transRef,
        description: `TRANSFER ${transRef} FROM SCB X7890`,
      })),
      actor,
    })
  )

  const slips: Slip[] = []
  for (let start = 0; start < transfers.length; start += 4) {
    const batch = transfers.slice(start, start + 4)
    const images = await Promise.all(
      batch.map(({ order, transRef }) =>
        slipPhoto(scenario, { transRef, amount: order.transfer_amount, transferredAt })
      )
    )
    batch.forEach(({ order }, index) =>
      slips.push({
        platformOrderId: order.platform_order_id,
        orderId: ids.get(order.platform_order_id)!,
        image: images[index],
      })
    )
  }
  return slips
}

/** The signed /slip/upload requests, with the current `time` (signed just before a run). */
function signedUploads(slips: Slip[]): Upload[] {
  const time = Math.floor(Date.now() / 1000)
  return slips.map((slip) => {
    const body = Buffer.from(
      JSON.stringify({
        merchant_id: merchant.merchantId,
        token: credentials.token,
        time,
        platform_order_id: slip.platformOrderId,
        image_base64: slip.image.toString('base64'),
      })
    )
    return {
      orderId: slip.orderId,
      body,
      signature: createHmac('sha256', credentials.secret).update(body).digest('hex'),
    }
  })
}

/** The orders as before their slips: no slip, not awaiting review. */
async function reopen(slips: Slip[]) {
  const ids = slips.map((slip) => slip.orderId)
  for (let start = 0; start < ids.length; start += 500) {
    const batch = ids.slice(start, start + 500)
    await db.from('payment_slips').whereIn('payment_order_id', batch).delete()
    await db.from('payment_orders').whereIn('id', batch).update({ awaiting_review: false })
  }
}

/** The sandbox slip of the transfer, photographed, at exactly the scenario's size. */
async function slipPhoto(
  scenario: Scenario,
  transfer: { transRef: string; amount: number; transferredAt: DateTimeValue }
) {
  const slip = await sandboxSlip({ ...transfer, receiverAccountNo: account.accountNo })
  let quality = calibrated.get(scenario) ?? scenario.quality
  for (;;) {
    const photo = await photoLike(slip, {
      resize: { width: scenario.width, height: scenario.height },
      noise: scenario.noise,
      blur: scenario.blur,
      jpegQuality: quality,
    })
    if (photo.length <= scenario.bytes) {
      calibrated.set(scenario, quality)
      return padJpeg(photo, scenario.bytes)
    }
    quality -= 1
  }
}

/** JPG comment segments (FF FE) after the start marker bring `jpeg` to `size` bytes. */
function padJpeg(jpeg: Buffer, size: number) {
  const segments: Buffer[] = []
  let missing = size - jpeg.length
  while (missing >= 4) {
    let take = Math.min(missing, 0xffff + 2)
    if (missing - take > 0 && missing - take < 4) take -= 4
    const segment = Buffer.alloc(take, 0x20)
    segment.writeUInt16BE(0xfffe, 0)
    segment.writeUInt16BE(take - 2, 2)
    segments.push(segment)
    missing -= take
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)])
}

/* --- HTTP client --------------------------------------------------------------- */

/** Sends the uploads `concurrency` at a time, in order, until done or `budgetMs` has passed. */
async function sendAll(uploads: Upload[], concurrency: number, budgetMs: number) {
  const agent =
    TRANSPORT === 'https'
      ? new HttpsAgent({ keepAlive: true, maxSockets: concurrency, ca: certificate })
      : new HttpAgent({ keepAlive: true, maxSockets: concurrency })
  const answers: Answer[] = []
  const deadline = performance.now() + budgetMs
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < uploads.length && performance.now() < deadline) {
        const index = next++
        answers[index] = await send(agent, uploads[index])
      }
    })
  )
  agent.destroy()
  return answers.filter(Boolean)
}

function send(agent: HttpAgent | HttpsAgent, upload: Upload): Promise<Answer> {
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': upload.body.length,
    'x-signature': upload.signature,
  }
  // Behind a TLS-terminating proxy, the proxy declares the original scheme.
  if (TRANSPORT === 'proxy') headers['x-forwarded-proto'] = 'https'
  const started = performance.now()
  const request = TRANSPORT === 'https' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: PORT, path: '/slip/upload', method: 'POST', headers, agent },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let message = text.slice(0, 200)
          try {
            const json = JSON.parse(text)
            message = json.data?.verification_msg ?? json.message ?? message
          } catch {}
          resolve({ status: res.statusCode ?? 0, message, ms: performance.now() - started })
        })
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(upload.body)
  })
}

/* --- the compiled server ------------------------------------------------------- */

/**
 * Starts `node build/bin/server.js` as production runs it, serving HTTPS
 * with certificate files (or plain HTTP behind a trusted proxy), slips
 * stored in a scratch directory, and rate limits out of the way.
 */
async function startServer() {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(PORT),
    LOG_LEVEL: 'warn',
    LOG_PRETTY: 'false',
    DRIVE_DISK: 'fs',
    DRIVE_FS_ROOT: join(scratch, 'storage'),
    SLIP_VERIFIERS: 'statement',
    API_RATE_LIMIT_PER_MERCHANT: '1000000',
    API_RATE_LIMIT_PER_IP: '1000000',
  }
  for (const name of ['TLS_CERT_PATH', 'TLS_KEY_PATH', 'TLS_SELF_SIGNED', 'TRUSTED_PROXIES']) {
    delete env[name]
  }
  if (TRANSPORT === 'https') {
    if (!certificate) {
      const pair = await generateSelfSignedCertificate()
      await writeFile(join(scratch, 'cert.pem'), pair.cert)
      await writeFile(join(scratch, 'key.pem'), pair.key, { mode: 0o600 })
      certificate = pair.cert
    }
    env.TLS_CERT_PATH = join(scratch, 'cert.pem')
    env.TLS_KEY_PATH = join(scratch, 'key.pem')
  } else {
    env.TLS_SELF_SIGNED = 'false'
    env.TRUSTED_PROXIES = '127.0.0.1'
  }

  const flags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean)
  const child: ChildProcess = spawn(process.execPath, [...flags, 'bin/server.js'], {
    cwd: BUILD,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk) => process.stderr.write(`[server] ${chunk}`))
  child.stderr!.on('data', (chunk) => process.stderr.write(`[server] ${chunk}`))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  await waitUntilListening(exited)

  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
      ])
      if (code === 'timeout') {
        child.kill('SIGKILL')
        throw new Error('the server did not stop within 20 s of SIGTERM')
      }
      if (code !== 0) console.error(`the server exited with status ${code}`)
    },
  }
}

async function waitUntilListening(exited: Promise<number | null>) {
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline && !gone) {
    const answered = await new Promise<boolean>((resolve) => {
      const options = { host: '127.0.0.1', port: PORT, path: '/health', method: 'GET' }
      const req =
        TRANSPORT === 'https'
          ? httpsRequest({ ...options, rejectUnauthorized: false }, () => resolve(true))
          : httpRequest(options, () => resolve(true))
      req.on('error', () => resolve(false))
      req.end()
    })
    if (answered) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(gone ? 'the server exited at start' : 'the server did not listen within 60 s')
}
