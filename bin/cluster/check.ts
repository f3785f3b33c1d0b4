/*
| Failover times of the local production topology (bin/cluster/topology.ts):
|
|   node --import @poppinss/ts-exec bin/cluster/check.ts [--runs 3]
|
| Each run: SIGKILL of the Galera node HAProxy writes to → seconds until a
| write through HAProxy succeeds again and until GET /health through HAProxy
| answers 200; the node is started again (it rejoins, the writer does not move
| back). Then SIGKILL of the Redis master → seconds until Sentinel names the
| replica master and until /health answers 200; the old master is started
| again (as a replica of the new one).
*/
import mysql from 'mysql2/promise'
import { health, startTopology, type Topology } from './topology.js'
import { sleep } from './processes.js'

const runsFlag = process.argv.indexOf('--runs')
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 1
/** How long to wait for a recovery before calling it "not within". */
const LIMIT_MS = 30_000

const seconds = (ms: number | undefined) =>
  ms === undefined ? `> ${LIMIT_MS / 1000} s` : `${(ms / 1000).toFixed(1)} s`

/** Polls `check` every 100 ms from `since`; ms from `since` until it first holds. */
async function timeUntil(since: number, check: () => Promise<boolean>) {
  while (performance.now() - since < LIMIT_MS) {
    if (await check().catch(() => false)) return performance.now() - since
    await sleep(100)
  }
  return undefined
}

async function throughHaproxy<T>(topology: Topology, sql: string, values: unknown[] = []) {
  const connection = await mysql.createConnection({
    host: '127.0.0.1',
    port: topology.haproxy.sqlPort,
    user: 'root',
    database: 'gateway_cluster_check',
    connectTimeout: 1000,
  })
  try {
    connection.on('error', () => {})
    // A write that hangs on a node being evicted counts as not (yet) succeeding.
    const [rows] = await connection.query({ sql, values, timeout: 2000 })
    return rows as T
  } finally {
    connection.destroy()
  }
}

const healthy = (topology: Topology) => async () => (await health(topology.webUrl, 1000)) === 200

async function writerFailover(topology: Topology) {
  const [{ name }] = await throughHaproxy<{ name: string }[]>(
    topology,
    'SELECT @@wsrep_node_name AS name'
  )
  const writer = topology.galera.nodes.find((node) => node.name === name)!
  const started = performance.now()
  await writer.kill('SIGKILL')
  const [write, web] = await Promise.all([
    timeUntil(started, async () => {
      await throughHaproxy(topology, 'INSERT INTO probes (at) VALUES (NOW(3))')
      return true
    }),
    timeUntil(started, healthy(topology)),
  ])
  const [{ name: moved }] = await throughHaproxy<{ name: string }[]>(
    topology,
    'SELECT @@wsrep_node_name AS name'
  )
  const rejoinStarted = performance.now()
  await writer.start()
  const rejoin = performance.now() - rejoinStarted
  await sleep(2000)
  const [{ name: after }] = await throughHaproxy<{ name: string }[]>(
    topology,
    'SELECT @@wsrep_node_name AS name'
  )
  return { killed: name, moved, after, write, web, rejoin }
}

async function redisFailover(topology: Topology) {
  const master = await topology.redis.currentMaster()
  const server = topology.redis.servers.find((candidate) => candidate.port === master.port)!
  const started = performance.now()
  await server.kill('SIGKILL')
  const [promotion, web] = await Promise.all([
    timeUntil(started, async () => (await topology.redis.currentMaster()).port !== master.port),
    timeUntil(started, healthy(topology)),
  ])
  const restartStarted = performance.now()
  await server.start()
  const webAfterRestart = await timeUntil(restartStarted, healthy(topology))
  return { promotion, web, webAfterRestart }
}

const topology = await startTopology({ log: (line) => console.log(`cluster: ${line}`) })
try {
  await topology.galera.nodes[0].query('CREATE DATABASE gateway_cluster_check')
  await topology.galera.nodes[0].query(
    'CREATE TABLE probes (id BIGINT AUTO_INCREMENT PRIMARY KEY, at DATETIME(3) NOT NULL)',
    [],
    'gateway_cluster_check'
  )
  for (let run = 1; run <= RUNS; run++) {
    const db = await writerFailover(topology)
    console.log(
      `run ${run}: SIGKILL of Galera writer ${db.killed}: writes through HAProxy again after ${seconds(db.write)} (on ${db.moved}), /health 200 through HAProxy after ${seconds(db.web)}; ${db.killed} rejoined (Synced) in ${seconds(db.rejoin)}, writer afterwards ${db.after}`
    )
    await sleep(3000)
    const redis = await redisFailover(topology)
    console.log(
      `run ${run}: SIGKILL of Redis master: Sentinel promoted the replica after ${seconds(redis.promotion)}, /health 200 through HAProxy after ${seconds(redis.web)}; after the old master was started again (as replica): /health 200 after ${seconds(redis.webAfterRestart)}`
    )
    await sleep(3000)
  }
} finally {
  await topology.stop()
}
