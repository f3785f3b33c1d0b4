/*
| `npm run bench:slots`: MariaDB's CPU for the ways a create takes its
| transfer_amount (app/payments/deposit_slots.ts), each in a transaction of
| its own on one connection, as the create's batch sends them: the amount
| itself when it is free (takeAmountStatement), and on a busy day, where the
| amount and often the next satang are held by open orders, the window of
| amounts (chooseSlotStatement, 8, 4 and 3 amounts wide). A transaction with
| no slot statement is the floor. MariaDB's CPU comes from /proc (a local
| server); run it on a quiet machine.
|
| Knobs: SLOT_TRANSACTIONS (per variant, default 3000; at most 2,500 for
| each width of the busy day, which share its 15,000 amounts whose next
| satang is held too), BENCH_DATABASE (default gateway_bench; wiped and
| migrated, as bench:import's).
*/
import type { Statement } from '#core/sql_batch'
import { BENCH_DEPOSIT_ACCOUNT } from './support/deposit_account.js'
import { mariadbWithCpu } from './support/mariadb_cpu.js'

const { bootForBenchmark } = await import('./boot.js')
const app = await bootForBenchmark()
const { chooseSlotStatement, takeAmountStatement } = await import('#payments/deposit_slots')

const { default: DepositAccount } = await import('#payments/models/deposit_account')

const N = Number(process.env.SLOT_TRANSACTIONS ?? 3000)
/** The window's widths measured on the busy day, and the held amounts each gets per round. */
const WIDTHS = [8, 4, 3]
const HELD_PER_WIDTH = Math.min(N, Math.floor(15_000 / (2 * WIDTHS.length)))
// The benchmark's deposit account.
const ACCOUNT = await DepositAccount.create({ ...BENCH_DEPOSIT_ACCOUNT })
// The amounts the benchmark's creates ask for: 100 THB + k × 10 THB.
const base = (k: number) => 100_00 + k * 1000

const { connection, serverCpu } = await mariadbWithCpu()

// The benchmark's busy day on one account: 20,000 amounts held, and for
// 15,000 of them the next satang too (bench/run.ts, create-full).
await connection.query(
  `INSERT INTO deposit_slots (deposit_account_id, slot_amount, held)
   SELECT ${ACCOUNT.id}, ${base(0)} + seq * 1000, 1 FROM seq_0_to_19999
   UNION ALL SELECT ${ACCOUNT.id}, ${base(0)} + seq * 1000 + 1, 1 FROM seq_0_to_14999`
)

const sql = (statements: Statement[]) =>
  statements.map((one) => connection.format(one.sql, one.bindings as any[])).join(';\n')

async function measure(
  name: string,
  amount: (i: number) => number,
  slot: (a: number) => Statement[],
  count = N
) {
  const started = performance.now()
  const cpu = serverCpu()
  for (let i = 0; i < count; i++) {
    await connection.query(`BEGIN;\n${sql(slot(amount(i)))};\nCOMMIT`)
  }
  const wall = ((performance.now() - started) * 1000) / count
  const server = ((serverCpu() - cpu) * 1000) / count
  console.log(
    `${name.padEnd(50)} ${server.toFixed(0).padStart(4)} µs MariaDB, ${wall.toFixed(0)} µs wall`
  )
}

console.log(
  `${N} transactions each (${HELD_PER_WIDTH} for each width of the busy day), one connection; MariaDB's CPU per transaction`
)
for (const round of [0, 1]) {
  // Each round its own amounts: every busy-day transaction finds its amount held.
  const first = round * N
  await measure('floor (no slot statement)', base, () => [{ sql: 'DO 1', bindings: [] }])
  await measure(
    'amount free: takeAmountStatement',
    (i) => base(100_000 + first + i),
    (a) => [takeAmountStatement(ACCOUNT.id, a)]
  )
  await measure(
    'amount free: chooseSlotStatement',
    (i) => base(200_000 + first + i),
    (a) => [chooseSlotStatement(ACCOUNT, a)]
  )
  // The window's width (heldAmounts.windowWidth), each width of each round
  // on its own amounts among the 15,000 whose next satang is held too, so
  // that every width chooses the amount + 0.02.
  for (const [index, width] of WIDTHS.entries()) {
    const from = (round * WIDTHS.length + index) * HELD_PER_WIDTH
    await measure(
      `amount held (busy day): chooseSlotStatement, ${width} amounts`,
      (i) => base(from + i),
      (a) => [chooseSlotStatement(ACCOUNT, a, width)],
      HELD_PER_WIDTH
    )
  }
}
await connection.end()
await app.terminate()
