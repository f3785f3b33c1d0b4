import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { queryOnce } from '#tests/faults/helpers/mariadb'
import { ManagedProcess, StopWaiting, freePort, track, until } from './processes.js'

const exec = promisify(execFile)

export interface GaleraNode {
  name: string
  port: number
  pid?: number
  /** (Re)starts this node and waits until it is Synced (has joined the cluster). */
  start(): Promise<void>
  /** Default SIGKILL (a crash); waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>
  pause(): void
  resume(): void
  query<T = any>(sql: string, values?: unknown[], database?: string): Promise<T[]>
  status(): Promise<{ state: string; clusterSize: number; primary: boolean } | undefined>
}

export interface GaleraCluster {
  directory: string
  nodes: GaleraNode[]
  stop(): Promise<void>
}

interface Ports {
  sql: number
  gcomm: number
  ist: number
}

/** How long a node may take to start and finish its state transfer (mysqldump SST). */
const START_TIMEOUT_MS = 120_000

class Node implements GaleraNode {
  process?: ManagedProcess
  readonly directory: string
  readonly configFile: string

  constructor(
    readonly name: string,
    readonly ports: Ports,
    readonly cluster: Cluster
  ) {
    this.directory = join(cluster.directory, name)
    this.configFile = join(this.directory, 'my.cnf')
  }

  get port() {
    return this.ports.sql
  }

  get pid() {
    return this.process?.alive ? this.process.pid : undefined
  }

  get logFile() {
    return join(this.directory, 'error.log')
  }

  async init() {
    await mkdir(join(this.directory, 'data'), { recursive: true })
    await mkdir(join(this.directory, 'run'), { recursive: true })
    await mkdir(join(this.directory, 'tmp'), { recursive: true })
    await writeFile(this.configFile, this.config())
    await exec('mariadb-install-db', [
      `--defaults-file=${this.configFile}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ])
  }

  /** Every path absolute: a relative one breaks the state transfer. */
  config() {
    const dir = this.directory
    const lines = [
      '[mysqld]',
      `datadir=${dir}/data`,
      `innodb_data_home_dir=${dir}/data`,
      `innodb_log_group_home_dir=${dir}/data`,
      `socket=${dir}/run/mysqld.sock`,
      `pid-file=${dir}/run/mysqld.pid`,
      // Its own tmpdir: a starting server deletes every #sql* file of its tmpdir, so nodes
      // sharing /tmp would remove each other's temporary tables (and mariadb-install-db's).
      `tmpdir=${dir}/tmp`,
      `port=${this.ports.sql}`,
      'bind-address=127.0.0.1',
      'user=root',
      'skip-name-resolve',
      `log_error=${this.logFile}`,
      'innodb_buffer_pool_size=128M',
      'max_connections=500',
      'character-set-server=utf8mb4',
      'collation-server=utf8mb4_unicode_ci',
      'performance_schema=OFF',
    ]
    if (!this.cluster.wsrep) return lines.join('\n') + '\n'
    const members = this.cluster.nodes.map((node) => `127.0.0.1:${node.ports.gcomm}`).join(',')
    lines.push(
      'binlog_format=ROW',
      'innodb_autoinc_lock_mode=2',
      'wsrep_on=ON',
      'wsrep_provider=/usr/lib/galera/libgalera_smm.so',
      'wsrep_cluster_name=gw',
      `wsrep_cluster_address=gcomm://${members}`,
      'wsrep_node_address=127.0.0.1',
      `wsrep_node_name=${this.name}`,
      // gcache large enough that a node killed for a while rejoins by IST (only the missed
      // write sets) rather than by a full mysqldump SST.
      // fc_limit: a backup node on a busy machine may fall a few hundred write sets behind
      // before it makes the writer pause (flow control; the default 16 pauses it constantly).
      `wsrep_provider_options="base_port=${this.ports.gcomm};ist.recv_addr=127.0.0.1:${this.ports.ist};gcache.size=256M;gcs.fc_limit=256;gcs.fc_factor=0.8"`,
      // Write sets of different rows are applied in parallel on the backup nodes.
      'wsrep_slave_threads=4',
      'wsrep_sst_method=mysqldump',
      'wsrep_sst_auth=root:',
      `wsrep_sst_receive_address=127.0.0.1:${this.ports.sql}`
    )
    return lines.join('\n') + '\n'
  }

  async start() {
    if (this.process?.alive) return
    // Bootstrap a new cluster only when no other node is part of a Primary component:
    // a restarted first node must rejoin the others, never start a second cluster.
    const bootstrap = this.cluster.wsrep && !(await this.cluster.primaryExists(this))
    if (bootstrap) await this.markSafeToBootstrap()
    const args = [`--defaults-file=${this.configFile}`]
    if (bootstrap) args.push('--wsrep-new-cluster')
    const position = this.cluster.wsrep ? await this.recoverPosition() : undefined
    if (position) args.push(`--wsrep-start-position=${position}`)
    this.process = track(
      new ManagedProcess(`galera-${this.name}`, 'mariadbd', args, {
        logFile: join(this.directory, 'mariadbd.out'),
      })
    )
    const synced = await until(async () => {
      if (!this.process!.alive) throw new StopWaiting('mariadbd exited')
      if (!this.cluster.wsrep) return (await this.query('SELECT 1')).length === 1
      const status = await this.status()
      return status?.state === 'Synced' && status.primary
    }, START_TIMEOUT_MS).catch(() => false)
    if (!synced) {
      const tail = (await readFile(this.logFile, 'utf8').catch(() => '')).split('\n').slice(-40)
      await this.kill()
      throw new Error(`Galera node ${this.name} did not become Synced:\n${tail.join('\n')}`)
    }
  }

  /**
   * After a crash grastate.dat holds seqno -1: the node does not know its last committed
   * write set and would ask for a full state transfer (mysqldump SST, which also takes the
   * donor out of Synced). `--wsrep-recover` reads the position from InnoDB, as mysqld_safe
   * does, so that the node asks for only the write sets it missed (IST).
   */
  async recoverPosition() {
    const grastate = await readFile(join(this.directory, 'data', 'grastate.dat'), 'utf8').catch(
      () => ''
    )
    if (!/seqno:\s*-1/.test(grastate)) return undefined
    const logFile = join(this.directory, 'wsrep-recover.log')
    await rm(logFile, { force: true })
    await exec('mariadbd', [
      `--defaults-file=${this.configFile}`,
      '--wsrep-recover',
      `--log-error=${logFile}`,
    ]).catch(() => {})
    const log = await readFile(logFile, 'utf8').catch(() => '')
    return /WSREP: Recovered position: (\S+:-?\d+)/.exec(log)?.[1]
  }

  /**
   * After a crash of the whole cluster grastate.dat says safe_to_bootstrap: 0 on every node;
   * the node we chose to start first is the one to bootstrap from.
   */
  async markSafeToBootstrap() {
    const file = join(this.directory, 'data', 'grastate.dat')
    if (!existsSync(file)) return
    const text = await readFile(file, 'utf8')
    await writeFile(file, text.replace(/safe_to_bootstrap:\s*0/, 'safe_to_bootstrap: 1'))
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL') {
    if (!this.process?.alive) return
    if (signal === 'SIGKILL') return void (await this.process.kill())
    this.process.signal('SIGCONT')
    await this.process.stop(signal, 60_000)
  }

  pause() {
    this.process?.signal('SIGSTOP')
  }

  resume() {
    this.process?.signal('SIGCONT')
  }

  query<T = any>(sql: string, values: unknown[] = [], database?: string): Promise<T[]> {
    return queryOnce<T>(this.port, sql, values, database)
  }

  async status() {
    try {
      // A standalone server (wsrep off, the benchmark's baseline) is its own one-node Primary.
      if (!this.cluster.wsrep) {
        await this.query('SELECT 1')
        return { state: 'Synced', clusterSize: 1, primary: true }
      }
      const rows = await this.query<{ Variable_name: string; Value: string }>(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_cluster_status')"
      )
      const value = (name: string) => rows.find((row) => row.Variable_name === name)?.Value
      return {
        state: value('wsrep_local_state_comment') ?? 'unknown',
        clusterSize: Number(value('wsrep_cluster_size') ?? 0),
        primary: value('wsrep_cluster_status') === 'Primary',
      }
    } catch {
      return undefined
    }
  }
}

class Cluster implements GaleraCluster {
  nodes: Node[] = []

  constructor(
    readonly directory: string,
    readonly wsrep: boolean
  ) {}

  async primaryExists(except: Node) {
    for (const node of this.nodes) {
      if (node === except || !node.process?.alive) continue
      const status = await node.status()
      if (status?.primary) return true
    }
    return false
  }

  async stop() {
    await Promise.all(this.nodes.map((node) => node.kill('SIGKILL')))
  }
}

/**
 * A MariaDB Galera cluster of `nodes` nodes (default 3) on free loopback ports in
 * `directory`: n1 bootstraps, the others join with a mysqldump state transfer.
 * `wsrep: false` starts plain MariaDB servers with the same settings (the
 * single-node baseline of bench/cluster.ts).
 */
export async function startGalera(options: {
  directory: string
  nodes?: number
  wsrep?: boolean
}): Promise<GaleraCluster> {
  const cluster = new Cluster(resolve(options.directory), options.wsrep ?? true)
  const count = options.nodes ?? 3
  const used = new Set<number>()
  const port = async () => {
    for (;;) {
      const candidate = await freePort()
      if (!used.has(candidate)) {
        used.add(candidate)
        return candidate
      }
    }
  }
  for (let i = 1; i <= count; i++) {
    cluster.nodes.push(
      new Node(`n${i}`, { sql: await port(), gcomm: await port(), ist: await port() }, cluster)
    )
  }
  try {
    await Promise.all(cluster.nodes.map((node) => node.init()))
    // One at a time: two joiners asking the same donor for a mysqldump SST at once is slower
    // than in turn, and a failed join is easier to read.
    for (const node of cluster.nodes) await node.start()
  } catch (error) {
    await cluster.stop()
    throw error
  }
  return cluster
}
