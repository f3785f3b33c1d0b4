import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { redisCommand } from '#tests/faults/helpers/redis'
import { ManagedProcess, StopWaiting, freePort, track, until } from './processes.js'

export interface RedisServer {
  name: string
  port: number
  pid?: number
  alive: boolean
  logFile: string
  call(...command: string[]): Promise<unknown>
  start(): Promise<void>
  kill(signal?: NodeJS.Signals): Promise<void>
  pause(): void
  resume(): void
}

export interface RedisSentinelSet {
  /** [master, replica] as started; after a failover the roles are swapped. */
  servers: RedisServer[]
  /** Three sentinels, quorum 2. */
  sentinels: RedisServer[]
  masterName: string
  /** Value of REDIS_SENTINELS: '127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3'. */
  sentinelsEnv: string
  currentMaster(): Promise<{ host: string; port: number }>
  stop(): Promise<void>
}

const MASTER_NAME = 'gw'

class Server implements RedisServer {
  process?: ManagedProcess
  port = 0

  constructor(
    readonly name: string,
    readonly directory: string,
    /** Arguments given the port; for a data server also whom to replicate at start. */
    readonly args: (port: number) => Promise<string[]>
  ) {}

  get pid() {
    return this.process?.alive ? this.process.pid : undefined
  }

  get alive() {
    return this.process?.alive === true
  }

  /** One command on a short-lived connection; undefined when the server does not answer. */
  call(...args: string[]): Promise<unknown> {
    return redisCommand(this.port, (redis) => redis.call(args[0], ...args.slice(1))).catch(
      () => undefined
    )
  }

  get logFile() {
    return join(this.directory, `${this.name}.log`)
  }

  async start() {
    if (this.process?.alive) return
    this.port ||= await freePort()
    this.process = track(
      new ManagedProcess(`redis-${this.name}`, 'redis-server', await this.args(this.port), {
        logFile: this.logFile,
      })
    )
    const ready = await until(async () => {
      if (!this.process!.alive) throw new StopWaiting('redis-server exited')
      return (await redisCommand(this.port, (redis) => redis.ping())) === 'PONG'
    }, 20_000).catch(() => false)
    if (!ready) throw new Error(`Redis ${this.name} did not start:\n${await this.process.tail()}`)
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL') {
    if (!this.process?.alive) return
    if (signal === 'SIGKILL') return void (await this.process.kill())
    this.process.signal('SIGCONT')
    await this.process.stop(signal, 20_000)
  }

  pause() {
    this.process?.signal('SIGSTOP')
  }

  resume() {
    this.process?.signal('SIGCONT')
  }
}

/**
 * A Redis master and one replica (no persistence: whatever Redis holds is
 * rebuilt from the database), watched by three Sentinels with quorum 2 under
 * the master name 'gw'. Everything announces 127.0.0.1 so that the addresses
 * Sentinel hands out are reachable from the gateway processes.
 */
export async function startRedisSentinel(options: {
  directory: string
  downAfterMs?: number
  failoverTimeoutMs?: number
}): Promise<RedisSentinelSet> {
  const directory = resolve(options.directory, 'redis')
  await mkdir(directory, { recursive: true })
  const downAfterMs = options.downAfterMs ?? 2000
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 6000

  const sentinels: Server[] = []
  const servers: Server[] = []

  async function currentMaster() {
    for (const sentinel of sentinels) {
      if (!sentinel.process?.alive) continue
      try {
        const reply = (await redisCommand(sentinel.port, (redis) =>
          redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)
        )) as [string, string] | null
        if (reply) return { host: reply[0], port: Number(reply[1]) }
      } catch {}
    }
    throw new Error('No Sentinel answered with the current Redis master')
  }

  const dataServer = (name: string) => {
    const server: Server = new Server(name, directory, async (port) => {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        directory,
        '--dbfilename',
        `${name}.rdb`,
        '--replica-announce-ip',
        '127.0.0.1',
        // Full syncs start at once (Redis 7 waits 5 s for more replicas by default).
        '--repl-diskless-sync-delay',
        '0',
        // BullMQ's requirement: keys are never evicted.
        '--maxmemory-policy',
        'noeviction',
      ]
      // A server (re)started while another one is master comes back as its replica, not as a
      // second, empty master (Sentinel would convert it only later, after clients wrote to it).
      const master = sentinels.some((sentinel) => sentinel.process?.alive)
        ? await currentMaster().catch(() => undefined)
        : server === servers[0]
          ? undefined
          : { host: '127.0.0.1', port: servers[0].port }
      if (master && master.port !== port) {
        args.push('--replicaof', master.host, String(master.port))
      }
      return args
    })
    return server
  }

  servers.push(dataServer('master'), dataServer('replica'))
  await servers[0].start()
  await servers[1].start()
  await until(async () => {
    const info = await redisCommand(servers[0].port, (redis) => redis.info('replication'))
    return /connected_slaves:1/.test(info) && /state=online/.test(info)
  }, 20_000)

  for (let i = 1; i <= 3; i++) {
    const name = `sentinel${i}`
    sentinels.push(
      new Server(name, directory, async (port) => {
        // Sentinel rewrites its own configuration file (it records the new master there).
        const configFile = join(directory, `${name}.conf`)
        await writeFile(
          configFile,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${directory}`,
            'sentinel announce-ip 127.0.0.1',
            `sentinel announce-port ${port}`,
            `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${servers[0].port} 2`,
            `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
            `sentinel failover-timeout ${MASTER_NAME} ${failoverTimeoutMs}`,
            `sentinel parallel-syncs ${MASTER_NAME} 1`,
            '',
          ].join('\n')
        )
        return [configFile, '--sentinel']
      })
    )
  }
  try {
    for (const sentinel of sentinels) await sentinel.start()
    // Ready once every sentinel knows the replica and the other two sentinels.
    const ready = await until(async () => {
      for (const sentinel of sentinels) {
        const master = (await redisCommand(sentinel.port, (redis) =>
          redis.call('SENTINEL', 'MASTER', MASTER_NAME)
        )) as string[]
        const field = (key: string) => master[master.indexOf(key) + 1]
        if (Number(field('num-slaves')) < 1 || Number(field('num-other-sentinels')) < 2) {
          return false
        }
      }
      return true
    }, 30_000)
    if (!ready) throw new Error('Redis Sentinels did not discover each other')
  } catch (error) {
    await Promise.all([...servers, ...sentinels].map((server) => server.kill()))
    throw error
  }

  return {
    servers,
    sentinels,
    masterName: MASTER_NAME,
    sentinelsEnv: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(','),
    currentMaster,
    async stop() {
      await Promise.all([...sentinels, ...servers].map((server) => server.kill()))
    },
  }
}
