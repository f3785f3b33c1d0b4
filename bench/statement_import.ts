/*
| Statement import benchmark: the gateway's import through the command
| operators use, side by side with the floor, a bare multi-row INSERT of the
| same parsed lines, in the same run (docs/reconciliation.md, "Benchmark").
|
| Setup, in this process, on its own database (BENCH_DATABASE, default
| gateway_import_bench; wiped): FILES deposit accounts (default 1), ORDERS
| open payment orders over them (default 10,000, each holding a distinct
| amount), and one neutral file per account of LINES / FILES lines (LINES,
| or IMPORT_LINES, default 100,000): a credit paying each of its orders,
| shuffled among lines that match nothing (one third debits). EXPIRED adds
| that many long-expired orders (status error, up to 300 days old) whose
| amounts no line has: every credit is checked against them for a late
| payment.
|
| Then, right after one another:
|  - the floor, file by file: the file parsed by the gateway's parser into
|    the rows the gateway stores (not timed), then timed: INSERTs of
|    FLOOR_CHUNK rows each (default 1,000) through mysql2 in one transaction
|    into the empty statement_lines, emptied again after (TRUNCATE);
|  - the gateway, file by file: `node build/ace.js statements:import --account ID --json
|    FILE`, a child process as production runs it (NODE_ENV=production, no
|    heap flags: what an operator's `node ace` gets). Its summary gives the
|    import's own time (elapsedMs: reading the file to the summary); the
|    whole command's wall time (boot included) is timed here. Its peak RSS
|    is the kernel's own accounting of the child (/usr/bin/time -f %M, its
|    maximum resident set), or its VmHWM read every 20 ms where
|    /usr/bin/time is missing.
|
| `throughput` is lines / the import's own time; `ratio` is that over the
| floor's lines/s. Exits 1 unless every order was paid once and every line
| stored once, and the ledger balances.
|
| On the compiled build (as measured):
|   node ace build && node build/bench/statement_import.js
| From the TypeScript sources (the command still runs compiled: build/ is
| built when older than the sources, see bench/support/build.ts):
|   npm run bench:import            (LINES=20000 ORDERS=2000 for a quick run)
*/
import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILD, ROOT, ensureBuild } from './support/build.js'
import { bareInsertFloor, parsedLineRows } from './support/import_floor.js'
import { childPids, mib, procCpuSeconds, procStatus, readFileSyncSafe } from './support/proc.js'

const LINES = Number(process.env.LINES ?? process.env.IMPORT_LINES ?? 100_000)
const ORDERS = Number(process.env.ORDERS ?? process.env.IMPORT_ORDERS ?? 10_000)
const EXPIRED = Number(process.env.EXPIRED ?? 0)
const FILES = Number(process.env.FILES ?? 1)
const FLOOR_CHUNK = Number(process.env.FLOOR_CHUNK ?? 1000)
/** More node flags of the command (e.g. `--cpu-prof --cpu-prof-dir=DIR` for a profile). */
const COMMAND_FLAGS = process.env.COMMAND_FLAGS?.split(' ').filter(Boolean) ?? []

// The benchmark's process and the command share the database, Redis db and APP_KEY.
process.env.BENCH_DATABASE ??= 'gateway_import_bench'
process.env.REDIS_DB ??= '13'
process.env.QUEUE_PREFIX ??= '{gw-import}'
process.env.APP_KEY ??= 'benchmark-key-not-secret-0123456789abcdef'

// Compiled, this file is build/bench/statement_import.js and the build is its own root.
const compiled = import.meta.url.endsWith('.js')
const APP_ROOT = compiled ? ROOT : BUILD
if (!compiled) await ensureBuild()

const { bootForBenchmark } = await import('./boot.js')
const app = await bootForBenchmark()
const { default: db } = await import('@adonisjs/lucid/services/db')
const { DateTime } = await import('luxon')
const { v7: uuidv7 } = await import('uuid')
const { serverConnection, databaseName } = await import('#config/database')
const { createPlatform } = await import('#merchants/actions/create_platform')
const { createMerchant } = await import('#merchants/actions/create_merchant')
const { default: DepositAccount } = await import('#payments/models/deposit_account')
const { STORED_LINE_COLUMNS } = await import('#reconciliation/statements')
const { newPlatformOrderId } = await import('#core/order_ids')
const { formatAmount } = await import('#core/money')
const { verifyLedger } = await import('#ledger/verify')

const actor = { name: 'bench' }
await createPlatform({ code: 'bench', name: 'Benchmark' }, actor)
const { merchant } = await createMerchant({ platform: 'bench', name: 'Bench shop' }, actor)

const accounts = []
for (let i = 0; i < FILES; i++) {
  accounts.push(
    await DepositAccount.create({
      depositGroup: 'bench',
      channel: 'transfer',
      bank: 'KBANK',
      accountNo: `90000000${String(i).padStart(2, '0')}`,
      accountName: `Bench ${i}`,
      minAmount: 2000,
      maxAdjustment: 999,
      priority: 0,
      active: true,
    })
  )
}

// Open orders, inserted in bulk: each holds a distinct transfer_amount on its account.
const now = DateTime.utc()
const ordersPerAccount = Math.floor(ORDERS / FILES)
const expected = new Map<number, number[]>()
for (const [index, account] of accounts.entries()) {
  const rows = []
  const amounts: number[] = []
  for (let k = 0; k < ordersPerAccount; k++) {
    const amount = 10_000 + k * 1_000 + index // distinct per account
    amounts.push(amount)
    rows.push({
      platform_order_id: newPlatformOrderId(merchant.orderPrefix, 'P', now),
      uuid: uuidv7(),
      merchant_id: merchant.id,
      merchant_order_id: `B${index}X${k}`,
      payment_type: 'TRANSFER',
      channel: 'transfer',
      deposit_account_id: account.id,
      amount,
      transfer_amount: amount,
      slot_amount: amount,
      customer_bank: 'SCB',
      customer_account_name: 'Customer',
      customer_account_no: '1234567890',
      status: 'open',
      awaiting_review: false,
      order_at: now.minus({ minutes: 5 }).toJSDate(),
      expire_at: now.plus({ hours: 1 }).toJSDate(),
      created_at: now.toJSDate(),
      updated_at: now.toJSDate(),
    })
  }
  expected.set(account.id, amounts)
  for (let k = 0; k < EXPIRED / FILES; k++) {
    const amount = 20_000 + (k % 5_000) * 100 + 50 // ends in .50: no line has it
    const orderAt = now.minus({ days: k % 300, minutes: 30 })
    rows.push({
      platform_order_id: newPlatformOrderId(merchant.orderPrefix, 'P', now),
      uuid: uuidv7(),
      merchant_id: merchant.id,
      merchant_order_id: `E${index}X${k}`,
      payment_type: 'TRANSFER',
      channel: 'transfer',
      deposit_account_id: account.id,
      amount,
      transfer_amount: amount,
      slot_amount: null,
      customer_bank: 'SCB',
      customer_account_name: 'Customer',
      customer_account_no: '1234567890',
      status: 'error',
      error_reason: 'expired',
      awaiting_review: false,
      order_at: orderAt.toJSDate(),
      expire_at: orderAt.plus({ minutes: 15 }).toJSDate(),
      created_at: orderAt.toJSDate(),
      updated_at: orderAt.toJSDate(),
    })
  }
  for (let start = 0; start < rows.length; start += 500) {
    await db.table('payment_orders').multiInsert(rows.slice(start, start + 500))
  }
}

// One CSV per account, written to disk: its orders' payments, shuffled among
// lines that match nothing.
const directory = await mkdtemp(join(tmpdir(), 'statement-bench-'))
const linesPerAccount = Math.floor(LINES / FILES)
const files: string[] = []
for (const [index, account] of accounts.entries()) {
  const stamp = now.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
  const paying = expected.get(account.id)!
  const other = linesPerAccount - paying.length
  const all: string[] = []
  for (const amount of paying)
    all.push(`${stamp},credit,"${formatAmount(amount)}",,TRANSFER FROM SCB X7890`)
  for (let k = 0; k < other; k++) {
    const direction = k % 3 === 0 ? 'debit' : 'credit'
    // Amounts ending in .99 are never held by a bench order.
    all.push(`${stamp},${direction},"${formatAmount(5_000_00 + k * 100 + 99)}",,OTHER ${k}`)
  }
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[all[i], all[j]] = [all[j], all[i]]
  }
  const path = join(directory, `bench-${index}.csv`)
  await writeFile(path, ['date_time,direction,amount,reference,description', ...all].join('\n'))
  files.push(path)
}
expected.clear()

// The floor's lines point at an import row of their own (a NOT NULL foreign key).
const [floorImportId] = await db.table('statement_imports').insert({
  deposit_account_id: accounts[0].id,
  layout: 'neutral',
  file_name: 'floor.csv',
  file_sha256: '0'.repeat(64),
  line_count: 0,
  new_lines: 0,
  actor: 'bench',
  origin: 'command',
  created_at: new Date(),
})

const TIME = '/usr/bin/time'
const kernelPeak = existsSync(TIME)
// As production runs the command (bench/support/gateway.ts cannot be loaded from build/).
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: 'production',
  DB_DATABASE: databaseName,
  LOG_LEVEL: 'warn',
  LOG_PRETTY: 'false',
}

interface CommandRun {
  summary: Record<string, any>
  wallSeconds: number
  peakRss: number
  /** CPU seconds (user + system) of the command, and of MariaDB meanwhile. */
  cpuSeconds: number
  mariadbSeconds: number
}

/** The MariaDB server's processes, for the CPU it spends while the command runs. */
const mariadbPids = readdirSync('/proc')
  .filter((entry) => /^\d+$/.test(entry))
  .filter((pid) => ['mariadbd', 'mysqld'].includes(readFileSyncSafe(`/proc/${pid}/comm`).trim()))
  .map(Number)
const mariadbCpu = () => mariadbPids.reduce((total, pid) => total + procCpuSeconds(pid), 0)

/** `node ace.js statements:import` on the build, its peak RSS followed. */
function importThroughCommand(account: number, file: string) {
  const args = [
    ...COMMAND_FLAGS,
    'ace.js',
    'statements:import',
    '--account',
    String(account),
    '--json',
    file,
  ]
  return new Promise<CommandRun>((resolve, reject) => {
    const started = performance.now()
    const mariadbAtStart = mariadbCpu()
    const child = kernelPeak
      ? spawn(TIME, ['-f', 'maxrss_kib=%M cpu=%U+%S', process.execPath, ...args], {
          cwd: APP_ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(process.execPath, args, { cwd: APP_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    let polled = 0
    let polledCpu = 0
    const poll = setInterval(() => {
      const node = kernelPeak ? childPids(child.pid!)[0] : child.pid!
      if (!node) return
      polled = Math.max(polled, procStatus(node).hwm)
      polledCpu = Math.max(polledCpu, procCpuSeconds(node))
    }, 20)
    child.on('exit', (code) => {
      clearInterval(poll)
      const wallSeconds = (performance.now() - started) / 1000
      const mariadbSeconds = mariadbCpu() - mariadbAtStart
      const kib = Number(/maxrss_kib=(\d+)/.exec(stderr)?.[1] ?? 0)
      const cpu = /cpu=([\d.]+)\+([\d.]+)/.exec(stderr)
      const cpuSeconds = cpu ? Number(cpu[1]) + Number(cpu[2]) : polledCpu
      const json = stdout
        .split('\n')
        .reverse()
        .find((line) => line.startsWith('{'))
      if (code !== 0 || !json) {
        reject(new Error(`statements:import exited with ${code}:\n${stdout}\n${stderr}`))
        return
      }
      resolve({
        summary: JSON.parse(json),
        wallSeconds,
        peakRss: Math.max(kib * 1024, polled),
        cpuSeconds,
        mariadbSeconds,
      })
    })
  })
}

let floorRows = 0
let floorSeconds = 0
let floorMariadbSeconds = 0
let stored = 0
let matched = 0
let importSeconds = 0
let wallSeconds = 0
let peakRss = 0
let cpuSeconds = 0
let mariadbSeconds = 0
// The floor first, file by file, each on an emptied table (emptied again after).
for (const [index, account] of accounts.entries()) {
  const rows = await parsedLineRows(files[index], account.id, Number(floorImportId))
  const mariadbBefore = mariadbCpu()
  const floor = await bareInsertFloor({
    connection: { ...serverConnection, database: databaseName, timezone: 'Z' },
    columns: STORED_LINE_COLUMNS,
    rows,
    chunk: FLOOR_CHUNK,
  })
  floorMariadbSeconds += mariadbCpu() - mariadbBefore
  floorRows += floor.rows
  floorSeconds += floor.seconds
}
// Then the gateway, one command per file.
for (const [index, account] of accounts.entries()) {
  const run = await importThroughCommand(account.id, files[index])
  stored += Number(run.summary.newLines)
  matched += Number(run.summary.results.matched)
  importSeconds += Number(run.summary.elapsedMs) / 1000
  wallSeconds += run.wallSeconds
  peakRss = Math.max(peakRss, run.peakRss)
  cpuSeconds += run.cpuSeconds
  mariadbSeconds += run.mariadbSeconds
}
await rm(directory, { recursive: true, force: true })

const throughput = stored / importSeconds
const floorRate = floorRows / floorSeconds
const ledger = await verifyLedger()
const paidOnce = Number(
  (await db.from('payment_orders').where('status', 'unsettled_paid').count('* as total'))[0].total
)

console.log(`statement import benchmark`)
console.log(
  `  lines imported:   ${stored} (${FILES} file${FILES === 1 ? '' : 's'}, one per account)`
)
console.log(`  open orders:      ${ORDERS}, matched ${matched}`)
console.log(`  expired orders:   ${EXPIRED}`)
console.log(`  import:           ${importSeconds.toFixed(2)} s (inside the command)`)
console.log(`  command:          ${wallSeconds.toFixed(2)} s (wall time, boot and exit included)`)
console.log(`  throughput:       ${Math.round(throughput)} lines/s`)
console.log(`  with boot:        ${Math.round(stored / wallSeconds)} lines/s`)
console.log(
  `  floor:            ${Math.round(floorRate)} lines/s (${floorSeconds.toFixed(2)} s, INSERTs of ${FLOOR_CHUNK} rows)`
)
console.log(`  floor CPU:        MariaDB ${floorMariadbSeconds.toFixed(2)} s`)
console.log(`  ratio:            ${(throughput / floorRate).toFixed(3)}`)
console.log(`  ratio with boot:  ${(stored / wallSeconds / floorRate).toFixed(3)}`)
console.log(
  `  CPU:              command ${cpuSeconds.toFixed(2)} s, MariaDB ${mariadbSeconds.toFixed(2)} s (whole command; MariaDB counts every client)`
)
console.log(`  peak RSS:         ${mib(peakRss)} MiB`)
console.log(
  `  peak RSS from:    ${kernelPeak ? 'the kernel (/usr/bin/time -f %M)' : 'VmHWM, read every 20 ms'}`
)
console.log(`  ledger:           ${ledger.drifts.length === 0 ? 'balanced' : 'DRIFT'}`)
console.log(
  `  command line:     node ${join(APP_ROOT, 'ace.js')} statements:import (${process.version})`
)
if (matched !== ordersPerAccount * FILES || paidOnce !== matched) {
  console.error(`expected every order to be paid once, got ${matched} matched, ${paidOnce} paid`)
  process.exitCode = 1
}
if (stored !== linesPerAccount * FILES) {
  console.error(`expected ${linesPerAccount * FILES} lines stored, got ${stored}`)
  process.exitCode = 1
}
if (ledger.drifts.length > 0) {
  console.error(`ledger drift: ${JSON.stringify(ledger.drifts.slice(0, 5))}`)
  process.exitCode = 1
}
await app.terminate()
