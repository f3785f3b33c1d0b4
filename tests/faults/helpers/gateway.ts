import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { get } from 'node:https'
import { Queue } from 'bullmq'
import { ManagedProcess, StopWaiting, freePort, until } from '#tests/faults/helpers/processes'
import { MerchantClient, type Credentials } from '#tests/faults/helpers/client'
import { letOpenPaymentsExpire } from '#tests/faults/helpers/expiry'
import {
  APP_ROOT,
  DATABASE,
  PLATFORM,
  QUEUE_PREFIX,
  TIMINGS,
  aceOk,
  gatewayEnv,
  lastJsonLine,
  world,
} from '#tests/faults/helpers/world'

const NODE = join(APP_ROOT, 'node_modules/.bin/node')
export const QUEUES = ['payments', 'payouts', 'callbacks', 'reconciliation', 'operations'] as const

let processCount = 0
function logFile(name: string) {
  processCount++
  return join(world().directory, `${String(processCount).padStart(3, '0')}-${name}.log`)
}

export interface WebProcess {
  process: ManagedProcess
  url: string
  port: number
}

/** GET /health: the HTTP status, 0 when nothing answers. */
export function health(url: string, timeoutMs = 3000): Promise<{ status: number; json: any }> {
  return new Promise((resolve) => {
    const req = get(
      `${url}/health`,
      {
        ca: world().tls.cert,
        checkServerIdentity: () => undefined,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          let json: any
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          } catch {}
          resolve({ status: res.statusCode ?? 0, json })
        })
      }
    )
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve({ status: 0, json: undefined }))
  })
}

/** The gateway web process (bin/server.ts) of this checkout, on a free port. */
export async function startWeb(
  name = 'web',
  env: Record<string, string> = {}
): Promise<WebProcess> {
  const port = await freePort()
  const proc = new ManagedProcess(name, NODE, ['--import', '@poppinss/ts-exec', 'bin/server.ts'], {
    cwd: APP_ROOT,
    env: gatewayEnv({ PORT: String(port), ...env }),
    logFile: logFile(name),
  })
  const url = `https://127.0.0.1:${port}`
  const up = await until(async () => {
    if (!proc.alive) throw new StopWaiting('exited')
    return (await health(url)).status > 0
  }, 60_000).catch(() => false)
  if (!up) {
    await proc.kill()
    throw new Error(`${name} did not start:\n${await proc.tail()}`)
  }
  return { process: proc, url, port }
}

/** Runs `work` with a BullMQ Queue on a fresh connection to the private Redis. */
export async function withQueue<T>(name: string, work: (queue: Queue) => Promise<T>) {
  return world().redis.command(async (connection) => {
    const queue = new Queue(name, { connection, prefix: QUEUE_PREFIX })
    try {
      return await work(queue)
    } finally {
      await queue.close().catch(() => {})
    }
  })
}

export async function workerCount(queue = 'payouts') {
  return withQueue(queue, (q) => q.getWorkersCount())
}

/** Job scheduler ids of every queue (the repeatable sweeps, expiry, settlement). */
export async function schedulerIds(): Promise<string[]> {
  const ids: string[] = []
  for (const name of QUEUES) {
    const schedulers = await withQueue(name, (q) => q.getJobSchedulers())
    for (const scheduler of schedulers) ids.push(`${name}:${scheduler.key ?? scheduler.id}`)
  }
  return ids.sort()
}

/**
 * A `queue:work` process. Resolves once its BullMQ workers are registered in
 * Redis (one more worker on the payouts queue than before), so that a kill
 * right after hits a worker that is taking jobs.
 */
export async function startWorker(
  name = 'worker',
  options: { args?: string[]; env?: Record<string, string> } = {}
): Promise<ManagedProcess> {
  const before = await workerCount().catch(() => 0)
  const proc = new ManagedProcess(name, NODE, ['ace.js', 'queue:work', ...(options.args ?? [])], {
    cwd: APP_ROOT,
    env: gatewayEnv(options.env),
    logFile: logFile(name),
  })
  const up = await until(async () => {
    if (!proc.alive) throw new StopWaiting('exited')
    return (await workerCount()) > before
  }, 60_000).catch(() => false)
  if (!up) {
    await proc.kill()
    throw new Error(`${name} did not start:\n${await proc.tail()}`)
  }
  return proc
}

export interface TestMerchant {
  credentials: Credentials
  /** merchants.id */
  id: number
  /** Satang credited to balance by the suite. */
  credited: number
}

/**
 * A merchant of the suite's platform: deposits from group "faults" (one
 * PromptPay account, created once), payouts through the sandbox bank, no fees,
 * the shortest order TTL, the withdraw duplicate check off, and `balance`
 * satang credited.
 */
export async function createMerchant(label: string, balance: number): Promise<TestMerchant> {
  await ensureDepositAccount()
  const created = lastJsonLine(
    (await aceOk(['merchant:create', '--platform', PLATFORM, '--name', `Fault ${label}`, '--json']))
      .stdout
  )
  await aceOk([
    'merchant:configure',
    created.merchant_id,
    '--deposit-group',
    PLATFORM,
    '--payout-route',
    'sandbox',
    '--order-ttl',
    String(TIMINGS.ORDER_TTL_SECONDS),
    '--withdraw-fee',
    '0.00',
    '--payment-fee-rate',
    '0',
    '--withdraw-duplicate-check',
    'off',
    '--json',
  ])
  const [row] = await world().mariadb.query<{ id: number }>(
    'SELECT id FROM merchants WHERE merchant_id = ?',
    [created.merchant_id],
    DATABASE
  )
  const merchant: TestMerchant = {
    credentials: { merchant_id: created.merchant_id, token: created.token, secret: created.secret },
    id: Number(row.id),
    credited: 0,
  }
  await credit(merchant, balance)
  world().receiver.trust(created.merchant_id, created.secret)
  return merchant
}

let depositAccountReady: Promise<unknown> | undefined

function ensureDepositAccount() {
  depositAccountReady ??= aceOk([
    'deposit-account:create',
    '--group',
    PLATFORM,
    '--channel',
    'qr',
    '--bank',
    'KBANK',
    '--account-no',
    '0019876543',
    '--account-name',
    'Fault Suite Co., Ltd.',
    '--promptpay-id',
    '0812345678',
    '--json',
  ])
  return depositAccountReady
}

/**
 * Credits `satang` to the merchant's available balance as an operator
 * adjustment would: one balanced ledger transaction (adjustments → available)
 * and the same change on the balance projection, in one database transaction.
 */
export async function credit(merchant: TestMerchant, satang: number) {
  const { mariadb } = world()
  await mariadb.query(
    `INSERT IGNORE INTO ledger_accounts (merchant_id, owner, code, created_at)
     VALUES (NULL, 'gateway', 'adjustments', NOW())`,
    [],
    DATABASE
  )
  await mariadb.transaction(async (query) => {
    const result: any = await query(
      `INSERT INTO ledger_transactions (kind, reference_type, reference_id, description, created_at)
       VALUES ('test_adjustment', 'merchant', ?, 'fault suite credit', NOW(3))`,
      [merchant.credentials.merchant_id]
    )
    const transactionId = result.insertId
    await query(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT ?, id, ? FROM ledger_accounts WHERE owner = 'gateway' AND code = 'adjustments'`,
      [transactionId, -satang]
    )
    await query(
      `INSERT INTO ledger_entries (transaction_id, account_id, amount)
       SELECT ?, id, ? FROM ledger_accounts WHERE owner = ? AND code = 'available'`,
      [transactionId, satang, String(merchant.id)]
    )
    await query(
      'UPDATE merchant_balances SET balance = balance + ?, updated_at = NOW(3) WHERE merchant_id = ?',
      [satang, merchant.id]
    )
  }, DATABASE)
  merchant.credited += satang
}

/** Bangkok wall-clock time as statement files write it. */
function bangkokNow() {
  return new Date(Date.now() + 7 * 3600_000).toISOString().slice(0, 19).replace('T', ' ')
}

/**
 * The customers pay these payment orders: one neutral-layout statement file
 * per deposit account with a credit line of each order's transfer_amount
 * naming the order, imported with `statements:import` (one Ace process for all).
 */
export async function payOrders(platformOrderIds: string[]) {
  if (platformOrderIds.length === 0) return { matched: 0 }
  const rows = await world().mariadb.query<{
    platform_order_id: string
    deposit_account_id: number
    transfer_amount: string
  }>(
    `SELECT platform_order_id, deposit_account_id, transfer_amount FROM payment_orders
     WHERE platform_order_id IN (?)`,
    [platformOrderIds],
    DATABASE
  )
  const byAccount = new Map<number, string[]>()
  const at = bangkokNow()
  for (const row of rows) {
    const satang = Number(row.transfer_amount)
    const amount = `${Math.floor(satang / 100)}.${String(satang % 100).padStart(2, '0')}`
    const lines = byAccount.get(row.deposit_account_id) ?? []
    lines.push(`${at},credit,${amount},${row.platform_order_id},FAULT SUITE TRANSFER`)
    byAccount.set(row.deposit_account_id, lines)
  }
  let matched = 0
  for (const [account, lines] of byAccount) {
    const file = join(world().directory, `statement-${account}-${Date.now()}.csv`)
    await writeFile(file, `date_time,direction,amount,reference,description\n${lines.join('\n')}\n`)
    const summary = lastJsonLine(
      (await aceOk(['statements:import', file, '--account', String(account), '--json'])).stdout
    )
    matched += Number(summary.results?.matched ?? 0)
  }
  return { matched }
}

export function merchantClient(merchant: TestMerchant, web: WebProcess) {
  return new MerchantClient(web.url, merchant.credentials, world().tls.cert)
}

/** The merchant's unpaid orders outlive their TTL now (tests/faults/helpers/expiry.ts). */
export function letMerchantPaymentsExpire(merchant: TestMerchant) {
  return letOpenPaymentsExpire(
    (sql, values) => world().mariadb.query(sql, values, DATABASE),
    TIMINGS.ORDER_TTL_SECONDS,
    merchant.id
  )
}
