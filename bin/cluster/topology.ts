import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { get } from 'node:https'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { generateSelfSignedCertificate } from '#core/tls_certificate'
import { heapFlags } from '../heap_flags.js'
import { startGalera, type GaleraCluster } from './galera.js'
import { startRedisSentinel, type RedisSentinelSet } from './redis_sentinel.js'
import { startHaproxy, type Haproxy } from './haproxy.js'
import { ManagedProcess, StopWaiting, freePort, startWatchdog, track, until } from './processes.js'

export const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url))
const NODE = join(APP_ROOT, 'node_modules/.bin/node')
export const QUEUE_PREFIX = '{gw}'

export interface GatewayProcess {
  name: string
  port?: number
  /** Port of its Prometheus endpoint (METRICS_PORT or METRICS_WORKER_PORT). */
  metricsPort: number
  pid?: number
  logFile: string
  start(): Promise<void>
  /** Default SIGKILL (a crash); waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** SIGTERM: graceful shutdown (in-flight requests and jobs finish). */
  stop(): Promise<void>
}

export interface Topology {
  directory: string
  galera: GaleraCluster
  redis: RedisSentinelSet
  haproxy: Haproxy
  webs: GatewayProcess[]
  workers: GatewayProcess[]
  /** https://127.0.0.1:<HAProxy web port> */
  webUrl: string
  /** The self-signed certificate of the web processes (PEM), to trust in clients. */
  certificate: string
  /** Environment of every gateway process (DB through HAProxy, REDIS_SENTINELS, ...). */
  env: NodeJS.ProcessEnv
  ace(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>
  /** Everything, idempotent; `keep` keeps the directory (logs, data) this once. */
  stop(options?: { keep?: boolean }): Promise<void>
}

export interface TopologyOptions {
  /** Default: a new directory under the OS temporary directory, removed by stop(). */
  directory?: string
  webs?: number
  workers?: number
  /** Extra environment of the gateway processes (timings, rate limits, ...). */
  env?: Record<string, string>
  /** Default 'gateway'. */
  database?: string
  /** Galera nodes (default 3); with `wsrep: false`, plain MariaDB servers (bench baseline). */
  dbNodes?: number
  wsrep?: boolean
  /**
   * Run the compiled build (build/, NODE_ENV=production) as production does,
   * instead of the TypeScript sources in development mode: what benchmarks
   * measure. The caller builds it first (bench/support/build.ts).
   */
  compiled?: boolean
  /** Keep the directory (logs, data) after stop(). */
  keep?: boolean
  log?: (line: string) => void
}

/** GET /health; the HTTP status, 0 when nothing answers in time. */
export function health(url: string, timeoutMs = 2000): Promise<number> {
  return new Promise((done) => {
    const request = get(
      `${url}/health`,
      { rejectUnauthorized: false, agent: false, timeout: timeoutMs },
      (response) => {
        response.resume()
        response.on('end', () => done(response.statusCode ?? 0))
      }
    )
    request.on('timeout', () => request.destroy())
    request.on('error', () => done(0))
  })
}

/**
 * The production topology on this machine: a three-node MariaDB Galera
 * cluster, a Redis master + replica with three Sentinels, HAProxy (one
 * database writer; HTTPS round robin), then the gateway's web processes and
 * workers. The database is created and migrated through HAProxy before the
 * gateway processes start.
 */
export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const log = options.log ?? (() => {})
  const owned = !options.directory
  const directory = options.directory
    ? resolve(options.directory)
    : await mkdtemp(join(tmpdir(), 'gateway-cluster-'))
  await mkdir(directory, { recursive: true })
  startWatchdog(directory, owned && !options.keep)
  const database = options.database ?? 'gateway'

  const stops: (() => Promise<void>)[] = []
  let stopped: Promise<void> | undefined
  const stop = (how: { keep?: boolean } = {}) => {
    stopped ??= (async () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      for (const step of stops.reverse()) await step().catch(() => {})
      if (owned && !options.keep && !how.keep) await rm(directory, { recursive: true, force: true })
    })()
    return stopped
  }
  // Ctrl-C or a SIGTERM of the parent: stop everything first, then exit as the signal would.
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the topology`)
    void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)

  try {
    const pair = await generateSelfSignedCertificate()
    const certFile = join(directory, 'cert.pem')
    const keyFile = join(directory, 'key.pem')
    await writeFile(certFile, pair.cert)
    await writeFile(keyFile, pair.key, { mode: 0o600 })

    log(
      options.wsrep === false
        ? 'starting MariaDB (no Galera) and Redis with Sentinels'
        : 'starting MariaDB Galera (n1 bootstraps, the others join by state transfer) and Redis with Sentinels'
    )
    const [galera, redis] = await Promise.all([
      startGalera({
        directory: join(directory, 'galera'),
        nodes: options.dbNodes,
        wsrep: options.wsrep,
      }).then((cluster) => {
        stops.push(() => cluster.stop())
        return cluster
      }),
      startRedisSentinel({ directory }).then((set) => {
        stops.push(() => set.stop())
        return set
      }),
    ])
    log('starting HAProxy')
    const webCount = options.webs ?? 2
    const webPorts: number[] = []
    for (let i = 0; i < webCount; i++) webPorts.push(await freePort())
    const haproxy = await startHaproxy({
      directory,
      galera: galera.nodes,
      webPorts,
      standalone: options.wsrep === false,
    })
    stops.push(() => haproxy.stop())

    const master = await redis.currentMaster()
    const root = appRoot(options.compiled === true)
    const env: NodeJS.ProcessEnv = {
      PATH: `${join(APP_ROOT, 'node_modules/.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      NODE_ENV: options.compiled ? 'production' : 'development',
      APP_KEY: randomBytes(24).toString('hex'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DB_HOST: '127.0.0.1',
      DB_PORT: String(haproxy.sqlPort),
      DB_USER: 'root',
      DB_PASSWORD: '',
      DB_DATABASE: database,
      // As production runs (deploy/gateway/gateway.env.example): right after a
      // writer switch, the new writer may not yet have applied the old one's
      // last commits; causal reads wait for them, so a request whose COMMIT
      // answer was lost finds what it wrote instead of answering 503.
      DB_SYNC_WAIT: '1',
      // Through Sentinel once app/core/redis.ts reads REDIS_SENTINELS; until then, and for
      // whatever still reads REDIS_HOST/PORT, the master at start.
      REDIS_SENTINELS: redis.sentinelsEnv,
      REDIS_MASTER_NAME: redis.masterName,
      REDIS_HOST: master.host,
      REDIS_PORT: String(master.port),
      REDIS_DB: '0',
      QUEUE_PREFIX,
      TLS_CERT_PATH: certFile,
      TLS_KEY_PATH: keyFile,
      METRICS_HOST: '127.0.0.1',
      ...options.env,
    }
    for (const name of ['HOME', 'LANG', 'TERM', 'USER', 'TMPDIR']) {
      if (process.env[name] !== undefined) env[name] ??= process.env[name]
    }

    const ace = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          NODE,
          ['ace.js', ...args],
          { cwd: root, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
            done({ code, stdout: String(stdout), stderr: String(stderr) })
          }
        )
      })
    const aceOk = async (args: string[]) => {
      const result = await ace(args)
      if (result.code !== 0) {
        throw new Error(
          `node ace.js ${args.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`
        )
      }
      return result
    }

    log(`creating and migrating database ${database} through HAProxy`)
    await aceOk(['db:create'])
    await aceOk(['migration:run', '--force'])

    const webs: GatewayProcess[] = []
    for (let i = 0; i < webCount; i++) {
      webs.push(
        gatewayProcess({
          name: `web${i + 1}`,
          directory,
          compiled: options.compiled === true,
          env: { ...env, PORT: String(webPorts[i]), METRICS_PORT: String(await freePort()) },
          web: true,
          port: webPorts[i],
        })
      )
    }
    const workers: GatewayProcess[] = []
    for (let i = 0; i < (options.workers ?? 2); i++) {
      workers.push(
        gatewayProcess({
          name: `worker${i + 1}`,
          directory,
          compiled: options.compiled === true,
          env: { ...env, METRICS_WORKER_PORT: String(await freePort()) },
          web: false,
        })
      )
    }
    stops.push(async () => {
      await Promise.all([...webs, ...workers].map((proc) => proc.stop()))
    })
    log(`starting ${webs.length} web processes and ${workers.length} workers`)
    await Promise.all([...webs, ...workers].map((proc) => proc.start()))

    const webUrl = `https://127.0.0.1:${haproxy.webPort}`
    const healthy = await until(async () => (await health(webUrl)) === 200, 30_000, 250)
    if (!healthy) throw new Error(`${webUrl}/health did not answer 200 through HAProxy`)

    return {
      directory,
      galera,
      redis,
      haproxy,
      webs,
      workers,
      webUrl,
      certificate: pair.cert,
      env,
      ace,
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Registered BullMQ workers of the payouts queue (every queue:work process runs one). */
async function workerCount(env: NodeJS.ProcessEnv) {
  const connection = new Redis({
    host: env.REDIS_HOST,
    port: Number(env.REDIS_PORT),
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  })
  connection.on('error', () => {})
  const queue = new Queue('payouts', { connection, prefix: env.QUEUE_PREFIX })
  try {
    return await queue.getWorkersCount()
  } finally {
    await queue.close().catch(() => {})
    connection.disconnect()
  }
}

/** Where the gateway's processes run from: build/ when compiled, else the sources. */
function appRoot(compiled: boolean) {
  return compiled ? join(APP_ROOT, 'build') : APP_ROOT
}

function gatewayProcess(spec: {
  name: string
  directory: string
  /** build/ as production runs it, or the TypeScript sources. */
  compiled: boolean
  env: NodeJS.ProcessEnv
  web: boolean
  port?: number
}): GatewayProcess {
  let proc: ManagedProcess | undefined
  const logFile = join(spec.directory, `${spec.name}.log`)
  // The heap bounds production runs with (bin/heap_flags.sh).
  const args = spec.web
    ? [
        ...heapFlags('WEB_HEAP_FLAGS'),
        ...(spec.compiled ? ['bin/server.js'] : ['--import', '@poppinss/ts-exec', 'bin/server.ts']),
      ]
    : [...heapFlags('WORKER_HEAP_FLAGS'), 'ace.js', 'queue:work']
  const metricsPort = Number(spec.web ? spec.env.METRICS_PORT : spec.env.METRICS_WORKER_PORT)

  return {
    name: spec.name,
    port: spec.port,
    metricsPort,
    logFile,
    get pid() {
      return proc?.alive ? proc.pid : undefined
    },
    async start() {
      if (proc?.alive) return
      const before = spec.web ? 0 : await workerCount(spec.env).catch(() => 0)
      proc = track(
        new ManagedProcess(spec.name, NODE, args, {
          cwd: appRoot(spec.compiled),
          env: spec.env,
          logFile,
        })
      )
      const up = await until(
        async () => {
          if (!proc!.alive) throw new StopWaiting('exited')
          if (spec.web) return (await health(`https://127.0.0.1:${spec.port}`)) > 0
          return (await workerCount(spec.env)) > before
        },
        90_000,
        300
      ).catch(() => false)
      if (!up) {
        const exit = proc.exit
        await proc.kill()
        // The last lines say why (a crash's stack is at the end); each line cut, so a report keeps them all.
        const tail = (await proc.tail(8))
          .split('\n')
          .map((line) => line.slice(0, 240))
          .join('\n')
        const how = exit
          ? `exited with code ${exit.code ?? exit.signal}`
          : 'not answering /health after 90 s'
        throw new Error(`${spec.name} did not start (${how}); its log ends:\n${tail}`)
      }
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!proc?.alive) return
      if (signal === 'SIGKILL') return void (await proc.kill())
      await proc.stop(signal, 15_000)
    },
    async stop() {
      // SHUTDOWN_TIMEOUT_MS (default 10 s) for in-flight work, then a margin before SIGKILL.
      if (proc?.alive) await proc.stop('SIGTERM', 15_000)
    },
  }
}
