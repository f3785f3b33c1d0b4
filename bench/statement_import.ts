/*
| Statement import benchmark: 100,000 statement lines over 10 deposit accounts
| with 10,000 open payment orders (10,000 lines pay an order, 90,000 do not).
| Prints lines per second for parsing + storing + matching, and the memory peak
| of the import (VmHWM from the moment the files are written, after a GC when
| the process runs with --expose-gc). Each account's file is written to a
| temporary directory first and read when it is imported, as the CLI does.
| EXPIRED adds that many long-expired orders (status error, up to 300 days old)
| whose amounts no line has: every credit is checked against them for a late
| payment.
|
| On the compiled build (the figures the issue asks for; bench/run.ts does this):
|   node ace build && node --expose-gc build/bench/statement_import.js
| From the TypeScript sources (dev loader):
|   npm run bench:import            (LINES=20000 ORDERS=2000 for a quick run)
*/
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { procStatus, resetPeakRss } from './support/proc.js'
import { bootForBenchmark } from './boot.js'

const LINES = Number(process.env.LINES ?? 100_000)
const ORDERS = Number(process.env.ORDERS ?? 10_000)
const EXPIRED = Number(process.env.EXPIRED ?? 0)
const ACCOUNTS = 10

const app = await bootForBenchmark()
const { default: db } = await import('@adonisjs/lucid/services/db')
const { DateTime } = await import('luxon')
const { v7: uuidv7 } = await import('uuid')
const { createPlatform } = await import('#merchants/actions/create_platform')
const { createMerchant } = await import('#merchants/actions/create_merchant')
const { default: DepositAccount } = await import('#payments/models/deposit_account')
const { importStatement } = await import('#reconciliation/actions/import_statement')
const { newPlatformOrderId } = await import('#core/order_ids')
const { formatAmount } = await import('#core/money')

const actor = { name: 'bench' }
await createPlatform({ code: 'bench', name: 'Benchmark' }, actor)
const { merchant } = await createMerchant({ platform: 'bench', name: 'Bench shop' }, actor)

const accounts = []
for (let i = 0; i < ACCOUNTS; i++) {
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
const ordersPerAccount = ORDERS / ACCOUNTS
const expected = new Map<number, number[]>()
for (const [index, account] of accounts.entries()) {
  const rows = []
  for (let k = 0; k < ordersPerAccount; k++) {
    const amount = 10_000 + k * 1_000 + index // distinct per account
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
    expected.set(account.id, [...(expected.get(account.id) ?? []), amount])
  }
  for (let k = 0; k < EXPIRED / ACCOUNTS; k++) {
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
const linesPerAccount = LINES / ACCOUNTS
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
    // Amounts ending in .99x are never held by a bench order.
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

// The import's own peak: the setup's garbage collected (with --expose-gc) and
// the high-water mark reset (Linux) before the first file is read.
globalThis.gc?.()
const peakResets = resetPeakRss(process.pid)
const startRss = process.memoryUsage().rss
const started = performance.now()
let matched = 0
let stored = 0
let peakRss = startRss
const notePeak = () => {
  const { hwm } = procStatus(process.pid)
  peakRss = Math.max(peakRss, peakResets && hwm ? hwm : process.memoryUsage().rss)
}
const sampler = setInterval(notePeak, 100)
for (const [index, account] of accounts.entries()) {
  const content = await readFile(files[index], 'utf8')
  const summary = await importStatement(
    { deposit_account_id: account.id, file_name: `bench-${index}.csv`, content },
    actor
  )
  matched += summary.results.matched
  stored += summary.newLines
  notePeak()
}
clearInterval(sampler)
await rm(directory, { recursive: true, force: true })
const seconds = (performance.now() - started) / 1000

console.log(`statement import benchmark`)
console.log(`  lines imported:   ${stored} (${ACCOUNTS} files)`)
console.log(`  open orders:      ${ORDERS}, matched ${matched}`)
console.log(`  expired orders:   ${EXPIRED}`)
console.log(`  elapsed:          ${seconds.toFixed(1)} s`)
console.log(`  throughput:       ${Math.round(stored / seconds)} lines/s`)
console.log(`  peak RSS:         ${Math.round(peakRss / 1024 / 1024)} MiB`)
console.log(
  `  RSS before import: ${Math.round(startRss / 1024 / 1024)} MiB (booted, files written${globalThis.gc ? ', GC run' : ''})`
)
console.log(
  `  node:             ${process.version}, ${import.meta.url.endsWith('.js') ? 'compiled build' : 'TypeScript sources'}`
)
if (matched !== ORDERS) {
  console.error(`expected every order to be matched once, got ${matched}`)
  process.exitCode = 1
}
await app.terminate()
