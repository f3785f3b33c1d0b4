/*
| `npm run bench:statements`: MariaDB's CPU for each statement of a payment
| create's one round trip on an idle account (app/payments/actions/
| create_payment.ts): the request's row, the merchant_order_id reservation,
| the account's share lock, the amount, the order, its event and its count.
| They are made by the gateway's own statement builders, each batch in a
| transaction of its own on one connection: the batch as the create sends
| it (EXECUTEs of texts the connection prepared once,
| app/core/prepared_statements.ts) against the same statements as texts
| with their values in them (app/core/sql_text.ts), then the batch without
| each statement in turn beside the whole, in two rounds. A statement costs
| about the whole minus the batch without it. MariaDB's CPU comes from
| /proc (a local server); run it on a quiet machine.
|
| Knobs: STATEMENT_TRANSACTIONS (per variant, default 3000), BENCH_DATABASE
| (default gateway_bench; wiped and migrated, as bench:slots').
*/
import { randomBytes } from 'node:crypto'
import { DateTime } from 'luxon'
import type { Statement } from '#core/sql_batch'
import { createBenchMerchant } from './support/deposit_account.js'
import { mariadbWithCpu } from './support/mariadb_cpu.js'

const { bootForBenchmark } = await import('./boot.js')
const app = await bootForBenchmark()
const { newOrder } = await import('#payments/actions/create_payment')
const { requestStatement } = await import('#core/merchant_requests')
const { reserveMerchantOrderIdStatement } = await import('#merchants/merchant_order_ids')
const { countOrderStatement, lockAccountStatement, unchangedAccountExpression } =
  await import('#payments/deposit_pool')
const { takeAmountStatement } = await import('#payments/deposit_slots')
const { insertStatement } = await import('#core/sql_batch')
const { createdOrderEventStatement } = await import('#core/order_events')
const { newPlatformOrderId } = await import('#core/order_ids')
const { merchantActor } = await import('#core/actor')
const { statementText } = await import('#core/sql_text')
const { executeText } = await import('#core/prepared_statements')
const { DB_TIMEZONE } = await import('#config/database')

const N = Number(process.env.STATEMENT_TRANSACTIONS ?? 3000)

const { merchant, account } = await createBenchMerchant()

const NAMES = ['request', 'reservation', 'lock', 'amount', 'order', 'event', 'count'] as const
type Name = (typeof NAMES)[number]

let sequence = 0
/** A create's statements on the idle account, each create its own amount. */
function createStatements(): Record<Name, Statement> {
  const k = sequence++
  const now = DateTime.utc()
  const platformOrderId = newPlatformOrderId(merchant.orderPrefix, 'P', now)
  const amount = 100_00 + k
  const input = {
    merchantOrderId: `S${k}`,
    amount,
    bank: 'SCB' as const,
    accountName: 'Somchai Jaidee',
    accountNo: '1234567890',
    notifyUrl: 'https://merchant.example.test/callback',
  }
  const order = newOrder(merchant, 'TRANSFER', input, account, amount, true, {
    now,
    platformOrderId,
  })
  return {
    request: requestStatement(
      {
        merchantId: merchant.id,
        signature: randomBytes(32).toString('hex'),
        endpoint: '/payment/create-transfer',
      },
      'payment',
      platformOrderId
    ),
    reservation: reserveMerchantOrderIdStatement(merchant.id, input.merchantOrderId),
    lock: lockAccountStatement(account.id, 'id'),
    amount: takeAmountStatement(account.id, amount),
    order: insertStatement(order, { deposit_account_id: unchangedAccountExpression(account) }),
    event: createdOrderEventStatement({
      orderType: 'payment',
      to: 'open',
      actor: merchantActor(merchant.merchantId),
    }),
    count: countOrderStatement(account, amount, now)!,
  }
}

const { connection, serverCpu } = await mariadbWithCpu()

/** MariaDB's CPU per transaction (µs) for the batch `text(statements)` sent N times. */
async function measure(text: (statements: Record<Name, Statement>) => Promise<string> | string) {
  const cpu = serverCpu()
  for (let i = 0; i < N; i++) {
    await connection.query(`START TRANSACTION;\n${await text(createStatements())};\nCOMMIT`)
  }
  return ((serverCpu() - cpu) * 1000) / N
}

/** mysql2's callback connection under the promise wrapper, as the batch pool hands it out. */
const raw = (connection as unknown as { connection: Parameters<typeof executeText>[0] }).connection

/** The statements `names` as the create sends them: EXECUTEs of texts the connection prepared. */
const executes = (names: readonly Name[]) => (statements: Record<Name, Statement>) =>
  executeText(
    raw,
    names.map((name) => statements[name]),
    DB_TIMEZONE
  )

/** The same statements as texts with their values in them (the create before prepared statements). */
const texts = (names: readonly Name[]) => (statements: Record<Name, Statement>) =>
  names.map((name) => statementText(statements[name], DB_TIMEZONE)).join(';\n')

console.log(`${N} transactions each, one connection; MariaDB's CPU per transaction`)
const line = (label: string, micros: number, note = '') =>
  console.log(`${label.padEnd(40)} ${micros.toFixed(0).padStart(5)} µs${note}`)
for (const round of [1, 2]) {
  console.log(`round ${round}`)
  line('floor (DO 1)', await measure(() => 'DO 1'))
  // Each pair measured back to back: the tables grow as the run goes.
  for (const pair of [1, 2]) {
    const asTexts = await measure(texts(NAMES))
    const asExecutes = await measure(executes(NAMES))
    line(`the batch as texts (${pair})`, asTexts)
    line(
      `the batch as EXECUTEs (${pair})`,
      asExecutes,
      ` (${((100 * asExecutes) / asTexts).toFixed(0)} %)`
    )
  }
  for (const name of NAMES) {
    const whole = await measure(executes(NAMES))
    const without = await measure(executes(NAMES.filter((each) => each !== name)))
    line(
      `without the ${name}`,
      without,
      ` (the batch ${whole.toFixed(0)} µs: the ${name} ${(whole - without).toFixed(0)} µs)`
    )
  }
}
await connection.end()
await app.terminate()
