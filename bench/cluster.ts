/*
| `npm run bench:cluster`: signed POST /payment/create throughput on one
| MariaDB server versus the three-node Galera cluster, both behind HAProxy,
| in the same run on the same machine with the same load: the same number of
| web processes and workers (bin/cluster/topology.ts), the same loader
| (bench/support/loader.ts), connections, warm-up and duration. The gateway
| runs compiled (build/, NODE_ENV=production), as production runs it; build/
| is made first when missing or older than the sources (BENCH_BUILD=0 uses it
| as it is). RUNS=n repeats the pair n times (default 1).
|
|   DURATION=20 WARMUP=5 CONNECTIONS=20 WEBS=2 WORKERS=2 npm run bench:cluster
|
| Target: the cluster's creates/s within 50 % of the single server's.
*/
import { cpus, loadavg } from 'node:os'
import { startTopology, type Topology } from '../bin/cluster/topology.js'
import { runLoad, type LoadResult } from './support/loader.js'
import { ensureBuild } from './support/build.js'

const DURATION = Number(process.env.DURATION ?? 20)
const WARMUP = Number(process.env.WARMUP ?? 5)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 20)
const WEBS = Number(process.env.WEBS ?? 2)
const WORKERS = Number(process.env.WORKERS ?? 2)

/** The load of a benchmark is far above a merchant's normal request rate. */
const GATEWAY_ENV = {
  API_RATE_LIMIT_PER_MERCHANT: '100000000',
  API_RATE_LIMIT_PER_IP: '100000000',
  LOG_LEVEL: 'warn',
}

const lastJsonLine = (output: string) => JSON.parse(output.trim().split('\n').pop()!)

async function aceOk(topology: Topology, args: string[]) {
  const result = await topology.ace(args)
  if (result.code !== 0) {
    throw new Error(`node ace.js ${args.join(' ')}: ${result.stdout}${result.stderr}`)
  }
  return result
}

/** A platform, one PromptPay deposit account and a merchant drawing from it. */
async function createMerchant(topology: Topology) {
  await aceOk(topology, ['platform:create', '--code', 'bench', '--name', 'Bench', '--json'])
  await aceOk(topology, [
    'deposit-account:create',
    '--group',
    'bench',
    '--channel',
    'qr',
    '--bank',
    'KBANK',
    '--account-no',
    '0019876543',
    '--account-name',
    'Bench Co., Ltd.',
    '--promptpay-id',
    '0812345678',
    '--json',
  ])
  const created = lastJsonLine(
    (await aceOk(topology, ['merchant:create', '--platform', 'bench', '--name', 'Bench', '--json']))
      .stdout
  )
  await aceOk(topology, ['merchant:configure', created.merchant_id, '--deposit-group', 'bench'])
  return created as { merchant_id: string; token: string; secret: string }
}

let sequence = 0
const runTag = Date.now().toString(36).toUpperCase()

async function measure(label: string, options: { dbNodes: number; wsrep: boolean }) {
  console.log(`\n--- ${label} ---`)
  const started = performance.now()
  const topology = await startTopology({
    webs: WEBS,
    workers: WORKERS,
    dbNodes: options.dbNodes,
    wsrep: options.wsrep,
    env: GATEWAY_ENV,
    compiled: true,
    log: (line) => console.log(`${label}: ${line}`),
  })
  try {
    console.log(`${label}: up in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const merchant = await createMerchant(topology)
    // A fresh `time` each request: identical signed bytes would get the first answer.
    const body = (n: number) =>
      JSON.stringify({
        merchant_id: merchant.merchant_id,
        token: merchant.token,
        time: Math.floor(Date.now() / 1000) + (++sequence % 1_000_000) / 1_000_000,
        merchant_order_id: `K${runTag}${sequence}X${n}`,
        // 20,000 amounts 10 THB apart: each has its own transfer_amount slots.
        amount: (100 + (sequence % 20_000) * 10).toFixed(2),
        bank: 'SCB',
        account_name: 'Somchai Jaidee',
        account_no: '1234567890',
      })
    const load = (duration: number) =>
      runLoad({
        url: topology.webUrl,
        path: '/payment/create',
        secret: merchant.secret,
        body,
        connections: CONNECTIONS,
        duration,
      })
    if (WARMUP > 0) await load(WARMUP)
    const before = await flowControlPaused(topology)
    const result = await load(DURATION)
    const paused = (await flowControlPaused(topology)) - before
    console.log(
      `${label}: ${describe(result)}` +
        (options.wsrep ? `, writer paused by flow control ${paused.toFixed(1)} s` : '')
    )
    return result
  } finally {
    await topology.stop()
  }
}

/** Seconds the writer node spent paused by Galera flow control since it started. */
async function flowControlPaused(topology: Topology) {
  const [row] = await topology.galera.nodes[0]
    .query<{ Value: string }>("SHOW GLOBAL STATUS LIKE 'wsrep_flow_control_paused_ns'")
    .catch(() => [])
  return row ? Number(row.Value) / 1e9 : 0
}

function describe(result: LoadResult) {
  const refused = result.requests - result.ok
  return (
    `${result.perSecond.toFixed(0)} creates/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
    `${result.ok} created in ${result.seconds.toFixed(1)} s` +
    (refused > 0 || result.errors > 0
      ? `, ${refused} not 200 (${JSON.stringify(result.statuses)}), ${result.errors} errors${result.refusals.length > 0 ? `: ${result.refusals[0]}` : ''}`
      : '')
  )
}

const RUNS = Number(process.env.RUNS ?? 1)

console.log(
  `cluster benchmark: build/, NODE_ENV=production, POST /payment/create through HAProxy, ${WEBS} web processes, ${WORKERS} workers, ${CONNECTIONS} connections, ${DURATION} s after ${WARMUP} s warm-up, ${RUNS} run(s), ${cpus().length} CPUs`
)
await ensureBuild()

const rows: { single: LoadResult; galera: LoadResult; ratio: number; load: string }[] = []
for (let run = 1; run <= RUNS; run++) {
  const single = await measure(`run ${run}: single MariaDB`, { dbNodes: 1, wsrep: false })
  const galera = await measure(`run ${run}: Galera, 3 nodes`, { dbNodes: 3, wsrep: true })
  // The machine's other work moves both figures: the load average is printed beside each pair.
  const load = loadavg()[0].toFixed(1)
  rows.push({ single, galera, ratio: galera.perSecond / single.perSecond, load })
}

const cell = (result: LoadResult) =>
  `${result.perSecond.toFixed(0)} (${result.p50} / ${result.p99})`.padStart(19)
console.log(`
| run | single MariaDB creates/s (p50 / p99 ms) | Galera 3 nodes creates/s (p50 / p99 ms) | Galera / single | load average |
| --: | --: | --: | --: | --: |
${rows
  .map(
    (row, index) =>
      `| ${index + 1} | ${cell(row.single)} | ${cell(row.galera)} | ${(row.ratio * 100).toFixed(0)} % | ${row.load} |`
  )
  .join('\n')}`)
const ratios = rows.map((row) => row.ratio).sort((a, b) => a - b)
const median = ratios[Math.floor((ratios.length - 1) / 2)]
console.log(
  `\nGalera / single, median of ${rows.length}: ${(median * 100).toFixed(0)} % of the single server's creates/s (target: ≥ 50 %) — ${median >= 0.5 ? 'met' : 'NOT met'}`
)
if (rows.some((row) => row.single.ok === 0 || row.galera.ok === 0) || median < 0.5) {
  process.exitCode = 1
}
