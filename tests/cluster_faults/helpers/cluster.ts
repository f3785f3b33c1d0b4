import { readFile, rm } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { startTopology, type Topology } from '../../../bin/cluster/topology.js'
import { until } from '#tests/faults/helpers/processes'
import {
  CLUSTER_TIMINGS,
  healthy,
  sqlAccess,
  startReceiver,
  type Target,
} from '#tests/cluster_faults/helpers/target'

export const DATABASE = 'gateway_cluster_faults'

let current: { topology: Topology; target: Target } | undefined
let failed = false

/** What failed, printed again as the run's very last lines (a CI log shows its tail). */
export const failureSummary: string[] = []

export function markFailed(failures: string[] = []) {
  failed = true
  failureSummary.push(...failures)
}

export function cluster() {
  if (!current) throw new Error('The topology is not started (bin/test_cluster_faults.ts)')
  return current
}

/**
 * Starts the production topology (bin/cluster/topology.ts) with the fault
 * suite's short timings and a callback receiver whose certificate the
 * gateway trusts. Returns the teardown: the topology, the receiver and the
 * run's files (kept when a test failed, for the processes' logs).
 */
export async function startCluster(log: (line: string) => void): Promise<() => Promise<void>> {
  const { directory, receiver, caFile } = await startReceiver()
  let topology: Topology | undefined
  let sql: ReturnType<typeof sqlAccess> | undefined
  const teardown = async () => {
    await sql?.close().catch(() => {})
    const keep = failed || Boolean(process.env.FAULTS_KEEP_TMP)
    await topology?.stop({ keep }).catch(() => {})
    await receiver.close().catch(() => {})
    if (failed && topology) await printProcessWarnings(topology, log)
    if (keep) {
      log(`files kept in ${directory} and ${topology?.directory}`)
    } else {
      await rm(directory, { recursive: true, force: true })
    }
  }
  try {
    topology = await startTopology({
      database: DATABASE,
      keep: !!process.env.FAULTS_KEEP_TMP,
      env: { ...CLUSTER_TIMINGS, CALLBACK_CA_PATH: caFile },
      log,
    })
    sql = sqlAccess(topology.haproxy.sqlPort, DATABASE)
    const target: Target = {
      directory,
      webUrls: [topology.webUrl],
      cert: topology.certificate,
      receiver,
      ace: topology.ace,
      query: sql.query,
      transaction: sql.transaction,
      close: async () => {},
    }
    current = { topology, target }
  } catch (error) {
    await teardown()
    throw error
  }
  return teardown
}

/** The Galera node HAProxy sends the gateway's connections to (the writer). */
export async function writerNode() {
  const { topology, target } = cluster()
  const [row] = await target.query<{ name: string }>('SELECT @@wsrep_node_name AS name')
  const node = topology.galera.nodes.find((candidate) => candidate.name === row.name)
  if (!node) throw new Error(`HAProxy sends writes to an unknown node ${row.name}`)
  return node
}

/** Every Galera node Synced in a 3-node Primary component, and the gateway healthy. */
export async function waitAllUp(timeoutMs = 90_000) {
  const { topology, target } = cluster()
  const synced = await until(
    async () => {
      for (const node of topology.galera.nodes) {
        const status = await node.status()
        if (status?.state !== 'Synced' || !status.primary || status.clusterSize !== 3) return false
      }
      return true
    },
    timeoutMs,
    500
  )
  if (!synced) throw new Error('the Galera nodes are not all Synced in one Primary component')
  if (!(await healthy(target, timeoutMs))) throw new Error('GET /health is not 200 through HAProxy')
}

/** The Redis server Sentinel names master. */
export async function redisMaster() {
  const { redis } = cluster().topology
  const address = await redis.currentMaster()
  const server = redis.servers.find((candidate) => candidate.port === address.port)
  if (!server) throw new Error(`Sentinel names an unknown master ${address.host}:${address.port}`)
  return server
}

/** Until Sentinel names another master than `port` (the failover), at most `timeoutMs`. */
export function failedOver(port: number, timeoutMs = 30_000) {
  const { redis } = cluster().topology
  return until(async () => (await redis.currentMaster()).port !== port, timeoutMs, 250)
}

/** Until `port` is a replica whose link to the master is up. */
export function replicaInSync(port: number, timeoutMs = 30_000) {
  return until(
    async () => {
      const connection = new Redis({
        port,
        host: '127.0.0.1',
        lazyConnect: true,
        maxRetriesPerRequest: 1,
      })
      connection.on('error', () => {})
      try {
        const info = await connection.info('replication')
        return /role:slave/.test(info) && /master_link_status:up/.test(info)
      } finally {
        connection.disconnect()
      }
    },
    timeoutMs,
    500
  )
}

/**
 * A failed run's clues, printed (CI keeps the output, not the files): each
 * gateway process's last lines (the topology logs at LOG_LEVEL=warn, so
 * they are its warnings and errors, with any stack a crash printed).
 */
async function printProcessWarnings(topology: Topology, log: (line: string) => void) {
  for (const proc of [...topology.webs, ...topology.workers]) {
    const text = await readFile(proc.logFile, 'utf8').catch(() => '')
    const warnings = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-40)
    if (warnings.length === 0) continue
    log(`${proc.logFile}: its last ${warnings.length} warnings and errors`)
    for (const line of warnings) console.log(`  ${line.slice(0, 1000)}`)
  }
}
