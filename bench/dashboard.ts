/*
| Dashboard benchmark: fills a bench database with ORDERS payment orders
| (default 1,000,000) spread over 30 days, with proportionate payouts (1 per
| 5 orders), statement lines (one per order paid through the statement, plus
| unmatched and late ones), callbacks (1 per 3 orders, 1.2 attempts each),
| slips and approval requests; then times each dashboard figure (the
| functions of app/admin/queries/dashboard*.ts, as GET /admin runs them) and
| the whole page's data, RUNS times each after one warm-up run, and prints
| the median and the slowest run of each.
|
|   npm run bench:dashboard                 (1,000,000 orders)
|   ORDERS=100000 npm run bench:dashboard   (a quick run)
|   KEEP=1 npm run bench:dashboard          (keep the database afterwards, e.g. to EXPLAIN)
|   SEED=0 KEEP=1 npm run bench:dashboard   (time again against a kept database)
|
| The orders belong to MERCHANTS merchants (default 10) on PLATFORMS
| platforms (default 2), merchant m on platform ((m - 1) mod PLATFORMS) + 1,
| so that the page can also be timed filtered by one platform and by one
| merchant (the dashboard's selects); those timings alternate with the
| unfiltered ones run by run, since other work on the machine shifts them.
|
| Rows are written with multi-row INSERTs of CHUNK rows (default 5,000).
| Database: BENCH_DATABASE (default gateway_dashboard_bench), wiped and
| migrated, dropped at the end unless KEEP=1. docs/benchmarks.md explains
| the figures.
*/
import type { DateTime as DateTimeValue } from 'luxon'

// Before boot.js reads it (a static import would run boot.js first).
process.env.BENCH_DATABASE ??= 'gateway_dashboard_bench'
const { bootForBenchmark } = await import('./boot.js')
const ORDERS = Number(process.env.ORDERS ?? 1_000_000)
const CHUNK = Number(process.env.CHUNK ?? 5_000)
const RUNS = Number(process.env.RUNS ?? 5)
const SEED = process.env.SEED !== '0'
const KEEP = process.env.KEEP === '1'
const DAYS = 30
const ACCOUNTS = 40
const MERCHANTS = Number(process.env.MERCHANTS ?? 10)
const PLATFORMS = Number(process.env.PLATFORMS ?? 2)
/** Orders, payouts and callbacks go round the merchants. */
const merchantOf = (i: number) => (i % MERCHANTS) + 1
const platformOf = (merchant: number) => ((merchant - 1) % PLATFORMS) + 1

const app = SEED ? await bootForBenchmark() : await bootWithoutWipe()
const { default: db } = await import('@adonisjs/lucid/services/db')
const { DateTime } = await import('luxon')
const { dashboardData } = await import('#admin/queries/dashboard')
const { dashboardScope, dashboardWindow } = await import('#admin/queries/dashboard_scope')
const { callbackFigures, depositFigures, matchTimes, payoutFigures } =
  await import('#admin/queries/dashboard_daily')
const { channelUsage, queueDepths, reviewAges } = await import('#admin/queries/dashboard_queues')
const { closeQueues } = await import('#core/queue/queue_manager')

/** Booting for a kept database: the same as bootForBenchmark without the wipe. */
async function bootWithoutWipe() {
  const { Ignitor } = await import('@adonisjs/core')
  const root = new URL('../', import.meta.url)
  const ignitor = new Ignitor(root, {
    importer: (filePath: string) =>
      filePath.startsWith('./') || filePath.startsWith('../')
        ? import(new URL(filePath, root).href)
        : import(filePath),
  })
  const instance = ignitor.createApp('console')
  instance.booting(async () => {
    await import('#start/env')
  })
  await instance.init()
  await instance.boot()
  await instance.start(async () => {})
  return instance
}

const now = DateTime.utc()
const sqlTime = (at: DateTimeValue) => `'${at.toFormat('yyyy-LL-dd HH:mm:ss.SSS')}'`
/** A deterministic pseudo-random stream: the same data on every run. */
let seedState = 42
const random = () => {
  seedState = (seedState * 1103515245 + 12345) % 2147483648
  return seedState / 2147483648
}

/** Multi-row INSERTs of `count` rows made by `row(i)`, CHUNK rows per statement. */
async function fill(table: string, columns: string[], count: number, row: (i: number) => string) {
  for (let start = 0; start < count; start += CHUNK) {
    const values: string[] = []
    for (let i = start; i < Math.min(count, start + CHUNK); i++) values.push(`(${row(i)})`)
    await db.rawQuery(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(',\n')}`)
  }
}

async function seed() {
  const started = performance.now()
  const stamp = sqlTime(now)
  await fill(
    'platforms',
    ['id', 'code', 'name', 'created_at', 'updated_at'],
    PLATFORMS,
    (p) => `${p + 1}, 'bench${p + 1}', 'Benchmark ${p + 1}', ${stamp}, ${stamp}`
  )
  await fill(
    'merchants',
    [
      'id',
      'merchant_id',
      'platform_id',
      'name',
      'order_prefix',
      'deposit_group',
      'created_at',
      'updated_at',
    ],
    MERCHANTS,
    (m) =>
      `${m + 1}, 'bench-shop-${m + 1}', ${platformOf(m + 1)}, 'Bench shop ${m + 1}', 'B${String(m + 1).padStart(2, '0')}', 'bench', ${stamp}, ${stamp}`
  )
  const channels = ['qr', 'transfer', 'external']
  await fill(
    'deposit_accounts',
    [
      'id',
      'deposit_group',
      'channel',
      'bank',
      'account_no',
      'account_name',
      'hourly_count_limit',
      'daily_amount_limit',
      'created_at',
      'updated_at',
    ],
    ACCOUNTS,
    (i) =>
      `${i + 1}, 'bench', '${channels[i % 3]}', 'KBANK', '90000000${String(i).padStart(2, '0')}', 'Bench ${i}', ${i % 4 === 0 ? 'NULL' : 200}, ${i % 2 === 0 ? 'NULL' : 500_000_000}, ${stamp}, ${stamp}`
  )
  await fill(
    'statement_imports',
    [
      'id',
      'deposit_account_id',
      'layout',
      'file_name',
      'file_sha256',
      'line_count',
      'actor',
      'created_at',
    ],
    ACCOUNTS,
    (i) => `${i + 1}, ${i + 1}, 'neutral', 'bench.csv', '${'0'.repeat(64)}', 0, 'bench', ${stamp}`
  )

  // Payment orders, oldest first, evenly over DAYS days. Finished orders:
  // 80 % paid (60 % of all through a statement line), 15 % expired, 4 %
  // refused, 1 ‰ frozen; the last hour's orders are still open.
  const span = DAYS * 86_400_000
  const orderAt = (i: number) => now.minus({ milliseconds: span - (i * span) / ORDERS })
  const outcome = (i: number) => {
    const roll = (i * 7919) % 1000
    if (orderAt(i) > now.minus({ hours: 1 })) return 'open'
    if (roll < 1) return 'freeze'
    if (roll < 800) return roll < 600 ? 'matched' : 'paid'
    if (roll < 950) return 'expired'
    return 'refused'
  }
  const amountOf = (i: number) => 10_000 + ((i * 104_729) % 4_990_000)
  await fill(
    'payment_orders',
    [
      'id',
      'platform_order_id',
      'uuid',
      'merchant_id',
      'merchant_order_id',
      'payment_type',
      'channel',
      'deposit_account_id',
      'amount',
      'transfer_amount',
      'customer_bank',
      'customer_account_name',
      'customer_account_no',
      'status',
      'status_before_freeze',
      'awaiting_review',
      'error_reason',
      'order_at',
      'expire_at',
      'paid_at',
      'created_at',
      'updated_at',
    ],
    ORDERS,
    (i) => {
      const at = orderAt(i)
      const result = outcome(i)
      const status = {
        open: 'open',
        freeze: 'freeze',
        matched: 'settled_paid',
        paid: 'settled_paid',
        expired: 'error',
        refused: 'error',
      }[result]
      const paid =
        result === 'matched' || result === 'paid' ? sqlTime(at.plus({ minutes: 3 })) : 'NULL'
      const account = (i % ACCOUNTS) + 1
      const id = String(i + 1).padStart(12, '0')
      return `${i + 1}, 'BENP${id}00000000', '00000000-0000-7000-8000-${id}', ${merchantOf(i)}, 'B${i}', 'TRANSFER', '${channels[(account - 1) % 3]}', ${account}, ${amountOf(i)}, ${amountOf(i)}, 'SCB', 'Customer', '1234567890', '${status}', ${result === 'freeze' ? "'settled_paid'" : 'NULL'}, ${result === 'refused' && i % 10 === 0 ? 1 : 0}, ${result === 'expired' ? "'expired'" : result === 'refused' ? "'rejected'" : 'NULL'}, ${sqlTime(at)}, ${sqlTime(at.plus({ minutes: 15 }))}, ${paid}, ${sqlTime(at)}, ${sqlTime(at.plus({ minutes: 5 }))}`
    }
  )
  const seeded = { orders: ORDERS, payouts: 0, lines: 0, callbacks: 0, attempts: 0, slips: 0 }

  // Statement lines: one per order paid through the statement (matched a few
  // minutes after the customer's transfer), plus 1 unmatched or late line per
  // 50 orders, imported over the same days.
  const matchedOrders: number[] = []
  for (let i = 0; i < ORDERS; i++) if (outcome(i) === 'matched') matchedOrders.push(i)
  const extraLines = Math.floor(ORDERS / 50)
  await fill(
    'statement_lines',
    [
      'deposit_account_id',
      'import_id',
      'fingerprint',
      'line_at',
      'direction',
      'amount',
      'status',
      'order_type',
      'order_id',
      'matched_at',
      'created_at',
    ],
    matchedOrders.length + extraLines,
    (k) => {
      if (k < matchedOrders.length) {
        const i = matchedOrders[k]
        const account = (i % ACCOUNTS) + 1
        const lineAt = orderAt(i).plus({ minutes: 3 })
        const matchedAt = lineAt.plus({ minutes: 2 + (i % 10) })
        return `${account}, ${account}, '${String(k).padStart(64, '0')}', ${sqlTime(lineAt)}, 'credit', ${amountOf(i)}, 'matched', 'payment', ${i + 1}, ${sqlTime(matchedAt)}, ${sqlTime(matchedAt)}`
      }
      const at = now.minus({ milliseconds: random() * span })
      const account = (k % ACCOUNTS) + 1
      return `${account}, ${account}, '${String(k).padStart(64, '0')}', ${sqlTime(at)}, 'credit', ${5_000_00 + k}, '${k % 5 === 0 ? 'late' : 'unmatched'}', NULL, NULL, NULL, ${sqlTime(at.plus({ minutes: 10 }))}`
    }
  )
  seeded.lines = matchedOrders.length + extraLines

  // Payouts: 1 per 5 orders, over the same days; 90 % sent, 6 % failed.
  const payouts = Math.floor(ORDERS / 5)
  await fill(
    'payout_orders',
    [
      'platform_order_id',
      'merchant_id',
      'kind',
      'merchant_order_id',
      'amount',
      'fee',
      'bank',
      'account_no',
      'account_name',
      'status',
      'hold_state',
      'hold_expires_at',
      'connector',
      'order_at',
      'done_at',
      'created_at',
      'updated_at',
    ],
    payouts,
    (k) => {
      const at = now.minus({ milliseconds: span - (k * span) / payouts })
      const roll = k % 100
      const recent = at > now.minus({ minutes: 30 })
      const status = recent ? 'pending' : roll < 90 ? 'success' : roll < 96 ? 'failed' : 'rejected'
      const hold = status === 'success' ? 'consumed' : status === 'pending' ? 'held' : 'returned'
      return `'BENW${String(k).padStart(20, '0')}', ${merchantOf(k)}, '${k % 4 === 0 ? 'settlement' : 'withdraw'}', 'W${k}', ${20_000 + ((k * 7_919) % 2_000_000)}, 1000, 'KBANK', '5550000000', 'Payee', '${status}', '${hold}', ${sqlTime(at.plus({ minutes: 10 }))}, 'sandbox', ${sqlTime(at)}, ${recent ? 'NULL' : sqlTime(at.plus({ minutes: 4 }))}, ${sqlTime(at)}, ${sqlTime(at)}`
    }
  )
  seeded.payouts = payouts

  // Callbacks: 1 per 3 orders (payments and payouts alike); 2 % given up,
  // the last minutes' still pending. Attempts: one each, a second for 1 in 5.
  const callbacks = Math.floor(ORDERS / 3)
  const callbackAt = (k: number) => now.minus({ milliseconds: span - (k * span) / callbacks })
  await fill(
    'callback_outbox',
    [
      'id',
      'merchant_id',
      'order_type',
      'order_id',
      'platform_order_id',
      'status',
      'notify_url',
      'body',
      'state',
      'attempts',
      'delivered_at',
      'created_at',
    ],
    callbacks,
    (k) => {
      const at = callbackAt(k)
      const state =
        at > now.minus({ minutes: 2 }) ? 'pending' : k % 50 === 0 ? 'failed' : 'delivered'
      return `${k + 1}, ${merchantOf(k * 3)}, 'payment', ${k * 3 + 1}, 'BENP${String(k * 3 + 1).padStart(12, '0')}00000000', 'success', 'https://merchant.example/cb', '{}', '${state}', ${k % 5 === 0 ? 2 : 1}, ${state === 'delivered' ? sqlTime(at.plus({ seconds: 1 })) : 'NULL'}, ${sqlTime(at)}`
    }
  )
  const attempts = callbacks + Math.floor(callbacks / 5)
  await fill(
    'callback_attempts',
    [
      'callback_outbox_id',
      'series',
      'attempt',
      'job_id',
      'http_status',
      'latency_ms',
      'error',
      'created_at',
    ],
    attempts,
    (n) => {
      const second = n >= callbacks
      const k = second ? (n - callbacks) * 5 : n
      const at = callbackAt(k).plus({ seconds: second ? 30 : 1 })
      const failed = second ? k % 50 === 0 : k % 5 === 0
      return `${k + 1}, 0, ${second ? 2 : 1}, '${k + 1}', ${failed ? 500 : 200}, 120, ${failed ? "'HTTP 500'" : 'NULL'}, ${sqlTime(at)}`
    }
  )
  seeded.callbacks = callbacks
  seeded.attempts = attempts

  // Slips: on the refused orders kept for review (1 in 10 refused), undecided.
  const [reviewRows] = await db.rawQuery(
    'SELECT id, merchant_id, created_at FROM payment_orders WHERE awaiting_review = 1'
  )
  await fill(
    'payment_slips',
    [
      'payment_order_id',
      'merchant_id',
      'source',
      'storage_key',
      'sha256',
      'byte_size',
      'mime',
      'verification_status',
      'verification_msg',
      'verification',
      'checked_at',
      'created_at',
      'updated_at',
    ],
    reviewRows.length,
    (k) => {
      const at = sqlTime(DateTime.fromJSDate(reviewRows[k].created_at).plus({ minutes: 4 }))
      return `${reviewRows[k].id}, ${reviewRows[k].merchant_id}, 'payment_page', 'slips/bench-${k}.jpg', '${String(k).padStart(64, '0')}', 100000, 'image/jpeg', 'failed', 'amount mismatch', '{}', ${at}, ${at}, ${at}`
    }
  )
  seeded.slips = reviewRows.length
  await fill(
    'approval_requests',
    [
      'kind',
      'target_type',
      'target_id',
      'action',
      'input',
      'amount',
      'requested_by_actor',
      'status',
      'pending_key',
      'expires_at',
      'created_at',
      'updated_at',
    ],
    200,
    (k) => {
      const at = now.minus({ hours: k % 48 })
      const pending = k % 4 === 0
      return `'mark_paid', 'payment_order', 'BENP${k}', 'markPaymentPaid', '{}', 100000, 'bench', '${pending ? 'pending' : 'approved'}', ${pending ? `'bench-${k}'` : 'NULL'}, ${sqlTime(at.plus({ days: 3 }))}, ${sqlTime(at)}, ${sqlTime(at)}`
    }
  )
  await db.rawQuery(
    'ANALYZE TABLE payment_orders, payout_orders, statement_lines, callback_outbox, callback_attempts, payment_slips'
  )
  return { ...seeded, seconds: (performance.now() - started) / 1000 }
}

async function time<T>(run: () => Promise<T>) {
  await run() // warm-up: the first run reads the pages from disk into the buffer pool
  const times: number[] = []
  let result: T | undefined
  for (let n = 0; n < RUNS; n++) {
    const started = performance.now()
    result = await run()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return {
    median: times[Math.floor(times.length / 2)],
    max: times[times.length - 1],
    result: result!,
  }
}

if (SEED) {
  const seeded = await seed()
  console.log(`dashboard benchmark (${process.env.BENCH_DATABASE})`)
  console.log(
    `  seeded in ${seeded.seconds.toFixed(0)} s: ${seeded.orders} payment orders over ${DAYS} days, ` +
      `${seeded.payouts} payouts, ${seeded.lines} statement lines, ${seeded.callbacks} callbacks ` +
      `(${seeded.attempts} attempts), ${seeded.slips} slips`
  )
}
const window = dashboardWindow(now)
/** One call of the whole page's data, in ms. */
async function once() {
  const started = performance.now()
  await dashboardData(now)
  return performance.now() - started
}
// Past days come from dashboard_daily_rollups once computed: time the page
// with none stored (first view), with every stored day due for a refresh
// (one day per figure is read again), and then as most views find it.
await db.rawQuery('DELETE FROM dashboard_daily_rollups')
await dashboardData(now) // warms the buffer pool; the stored days are deleted again below
await db.rawQuery('DELETE FROM dashboard_daily_rollups')
console.log(
  `  whole page data, no day stored (first view):     ${(await once()).toFixed(1).padStart(8)} ms`
)
await db.rawQuery('UPDATE dashboard_daily_rollups SET computed_at = ?', [
  now.minus({ hours: 2 }).toJSDate(),
])
console.log(
  `  whole page data, every stored day due a refresh: ${(await once()).toFixed(1).padStart(8)} ms`
)

const figures: Array<[string, () => Promise<unknown>]> = [
  ['deposits (7 days by day)', () => depositFigures(window)],
  ['payouts (7 days by day)', () => payoutFigures(window)],
  ['time to match', () => matchTimes(window)],
  ['callbacks', () => callbackFigures(window)],
  ['usage against limits', () => channelUsage(window)],
  ['queue depths (Redis)', () => queueDepths()],
  ['review items by age', () => reviewAges(window)],
  ['whole page data', () => dashboardData(now)],
]
console.log(`  median / slowest of ${RUNS} runs after a warm-up (past days stored):`)
let page: unknown
for (const [name, run] of figures) {
  const timing = await time(run)
  console.log(
    `  ${name.padEnd(26)} ${timing.median.toFixed(1).padStart(8)} ms ${timing.max.toFixed(1).padStart(8)} ms`
  )
  page = timing.result
}
const data = page as Awaited<ReturnType<typeof dashboardData>>
console.log(
  `  check: 7 days ${data.deposits.week.count} deposits, ${data.payouts.week.count} payouts, ` +
    `${data.matching.week.matched} matched; today ${data.deposits.today.count} deposits`
)

// The page filtered by one platform (its merchants' orders) and by one
// merchant (the dashboard's selects), beside the unfiltered page: first
// views (no day stored), then RUNS rounds that time each filter in turn.
const filters: Array<[string, { platformId: number | null; merchantId: number | null }]> = [
  ['no filter', { platformId: null, merchantId: null }],
  [
    `platform 1 (${Math.ceil(MERCHANTS / PLATFORMS)} merchants)`,
    { platformId: 1, merchantId: null },
  ],
  ['merchant 3', { platformId: null, merchantId: 3 }],
]
console.log(
  `  filtered, first view (no day stored) and median / slowest of ${RUNS} alternating runs:`
)
for (const [name, filter] of filters) {
  await db.rawQuery('DELETE FROM dashboard_daily_rollups')
  const started = performance.now()
  await dashboardData(now, filter)
  console.log(
    `  ${`first view, ${name}`.padEnd(40)} ${(performance.now() - started).toFixed(1).padStart(8)} ms`
  )
}
for (const [, filter] of filters) await dashboardData(now, filter) // every filter's days stored
const filteredTimes = filters.map(() => [] as number[])
const filteredWeek = filters.map(() => 0)
for (let n = 0; n < RUNS; n++) {
  for (const [index, [, filter]] of filters.entries()) {
    const started = performance.now()
    const result = await dashboardData(now, filter)
    filteredTimes[index].push(performance.now() - started)
    filteredWeek[index] = result.deposits.week.count
  }
}
for (const [index, [name]] of filters.entries()) {
  const times = filteredTimes[index].sort((a, b) => a - b)
  console.log(
    `  ${`whole page data, ${name}`.padEnd(40)} ${times[Math.floor(times.length / 2)].toFixed(1).padStart(8)} ms ${times[times.length - 1].toFixed(1).padStart(8)} ms  (${filteredWeek[index]} deposits in 7 days)`
  )
}
// Today's deposits alone (always read live): the query the filter index serves.
const scopes = await Promise.all(filters.map(([, filter]) => dashboardScope(filter)))
const todayTimes = filters.map(() => [] as number[])
const todayOnly = { ...window, days: [window.days[window.days.length - 1]] }
for (let n = 0; n < RUNS * 4; n++) {
  for (const [index, scope] of scopes.entries()) {
    const started = performance.now()
    await depositFigures(todayOnly, scope)
    todayTimes[index].push(performance.now() - started)
  }
}
for (const [index, [name]] of filters.entries()) {
  const times = todayTimes[index].sort((a, b) => a - b)
  console.log(
    `  ${`today's deposits, ${name}`.padEnd(40)} ${times[Math.floor(times.length / 2)].toFixed(1).padStart(8)} ms ${times[times.length - 1].toFixed(1).padStart(8)} ms`
  )
}

// Each figure filtered by one merchant (past days stored), to see where a filter costs.
const merchantScope = scopes[2]
const filteredFigures: Array<[string, () => Promise<unknown>]> = [
  ['deposits', () => depositFigures(window, merchantScope)],
  ['payouts', () => payoutFigures(window, merchantScope)],
  ['time to match', () => matchTimes(window, merchantScope)],
  ['callbacks', () => callbackFigures(window, merchantScope)],
  ['usage against limits', () => channelUsage(window, merchantScope)],
  ['review items by age', () => reviewAges(window, merchantScope)],
]
for (const [name, run] of filteredFigures) {
  const timing = await time(run)
  console.log(
    `  ${`${name}, merchant 3`.padEnd(40)} ${timing.median.toFixed(1).padStart(8)} ms ${timing.max.toFixed(1).padStart(8)} ms`
  )
}

await closeQueues()
if (!KEEP) await db.rawQuery(`DROP DATABASE \`${process.env.BENCH_DATABASE}\``)
await app.terminate()
