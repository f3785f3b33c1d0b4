import { writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { GaleraNode } from './galera.js'
import { ManagedProcess, StopWaiting, freePort, track, until } from './processes.js'

const HAPROXY = existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy'

const NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url))
const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface Haproxy {
  sqlPort: number
  webPort: number
  pid?: number
  configFile: string
  logFile: string
  /** The check agent: GET http://127.0.0.1:<agentPorts[i]>/ answers for database node i. */
  agentPorts: number[]
  /** pid of the check agent process. */
  agentPid?: number
  start(): Promise<void>
  kill(signal?: NodeJS.Signals): Promise<void>
  restart(): Promise<void>
  /** HAProxy and the check agent. */
  stop(): Promise<void>
  /** Sets the web processes' ports (rewrites the configuration; takes effect at the next start). */
  setWebPorts(ports: number[]): Promise<void>
}

/**
 * bin/cluster/check_agent.ts: one HTTP port per database node, 200 when the node may take
 * writes. Ready once every port answers.
 */
async function startCheckAgent(directory: string, nodes: GaleraNode[], standalone: boolean) {
  const ports: number[] = []
  for (let i = 0; i < nodes.length; i++) ports.push(await freePort())
  const args = nodes.map((node, i) => `${ports[i]}:${node.port}`)
  if (standalone) args.push('--standalone')
  const proc = track(
    new ManagedProcess(
      'check-agent',
      NODE,
      ['--import', '@poppinss/ts-exec', 'bin/cluster/check_agent.ts', ...args],
      { cwd: APP_ROOT, logFile: join(directory, 'check-agent.log') }
    )
  )
  const ready = await until(async () => {
    if (!proc.alive) throw new StopWaiting('check agent exited')
    for (const port of ports) {
      const response = await fetch(`http://127.0.0.1:${port}/`)
      await response.text()
    }
    return true
  }, 30_000).catch(() => false)
  if (!ready) throw new Error(`The check agent did not start:\n${await proc.tail()}`)
  return { ports, proc, close: () => proc.kill() }
}

/**
 * HAProxy in TCP mode in front of the Galera nodes and the web processes.
 *
 * MySQL: one writer at a time. n1 is the only active server, n2 and n3 are
 * `backup`: HAProxy uses the first backup that is up only while n1 is down.
 * `stick on dst` with a one-entry table remembers the server the writer moved
 * to, so when n1 comes back the writer stays where it is (no failback, which
 * would briefly leave connections on two nodes); it moves again only when
 * that node fails. `on-marked-down shutdown-sessions` closes connections to a
 * node marked down, so no pooled connection goes on writing there.
 *
 * HTTPS: TCP passthrough (TLS ends in the web processes), round robin, health
 * check GET /health over TLS.
 */
export async function startHaproxy(options: {
  directory: string
  galera: GaleraNode[]
  webPorts?: number[]
  sqlPort?: number
  webPort?: number
  /** The database servers are plain MariaDB (no wsrep): up when they answer a query. */
  standalone?: boolean
}): Promise<Haproxy> {
  const directory = resolve(options.directory)
  const agent = await startCheckAgent(directory, options.galera, options.standalone ?? false)
  const sqlPort = options.sqlPort ?? (await freePort())
  const webPort = options.webPort ?? (await freePort())
  const configFile = join(directory, 'haproxy.cfg')
  const logFile = join(directory, 'haproxy.log')
  let webPorts = options.webPorts ?? []
  let proc: ManagedProcess | undefined

  const config = () =>
    [
      'global',
      '  maxconn 4096',
      '  log stdout format raw local0 notice',
      '',
      'defaults',
      '  mode tcp',
      '  log global',
      '  timeout connect 2s',
      // Pooled database connections and keep-alive HTTPS connections stay open a long time.
      '  timeout client 1h',
      '  timeout server 1h',
      '  timeout check 1500ms',
      '',
      'frontend mysql',
      `  bind 127.0.0.1:${sqlPort}`,
      '  default_backend galera',
      '',
      'backend galera',
      '  option httpchk GET /',
      '  stick-table type ip size 1',
      '  stick on dst',
      '  default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions',
      ...options.galera.map(
        (node, i) =>
          `  server ${node.name} 127.0.0.1:${node.port} check port ${agent.ports[i]}${i === 0 ? '' : ' backup'}`
      ),
      '',
      'frontend web',
      `  bind 127.0.0.1:${webPort}`,
      '  default_backend web',
      '',
      'backend web',
      '  balance roundrobin',
      // A web process answering 503 (its database or Redis is away) is alive
      // and answers merchants with the spec's 503 envelope: it stays in. Only
      // a process that does not answer is taken out; a connection refused by
      // a dead one is tried on the next server.
      '  option httpchk GET /health',
      '  http-check expect rstatus ^(200|503)$',
      '  retries 2',
      '  option redispatch',
      '  default-server inter 1s fall 2 rise 2 check-ssl verify none',
      ...webPorts.map((port, i) => `  server web${i + 1} 127.0.0.1:${port} check`),
      '',
    ].join('\n')

  const haproxy: Haproxy = {
    sqlPort,
    webPort,
    configFile,
    logFile,
    agentPorts: agent.ports,
    get agentPid() {
      return agent.proc.alive ? agent.proc.pid : undefined
    },
    get pid() {
      return proc?.alive ? proc.pid : undefined
    },
    async start() {
      if (proc?.alive) return
      await writeFile(configFile, config())
      // -db: stay in the foreground, so that the process we track is HAProxy itself.
      proc = track(new ManagedProcess('haproxy', HAPROXY, ['-db', '-f', configFile], { logFile }))
      const listening = await until(async () => {
        if (!proc!.alive) throw new StopWaiting('haproxy exited')
        return new Promise<boolean>((done) => {
          const socket = connect(sqlPort, '127.0.0.1')
          socket.once('connect', () => done(socket.destroy() !== undefined))
          socket.once('error', () => done(false))
        })
      }, 10_000).catch(() => false)
      if (!listening) throw new Error(`HAProxy did not start:\n${await proc.tail()}`)
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!proc?.alive) return
      if (signal === 'SIGKILL') return void (await proc.kill())
      await proc.stop(signal, 10_000)
    },
    async restart() {
      await haproxy.kill('SIGTERM')
      await haproxy.start()
    },
    async stop() {
      await haproxy.kill()
      await agent.close()
    },
    async setWebPorts(ports: number[]) {
      webPorts = ports
      await writeFile(configFile, config())
    },
  }
  await haproxy.start()
  return haproxy
}
