import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { closedPort as freePort } from '#tests/helpers/ports'

export const MASTER_NAME = 'gw'

/** One redis-server (data or Sentinel) of the set, on its own free port. */
export class RedisProcess {
  child?: ChildProcess
  #exited?: Promise<void>

  constructor(
    readonly name: string,
    readonly port: number,
    readonly args: string[]
  ) {}

  get alive() {
    return this.child !== undefined && this.child.exitCode === null && !this.child.signalCode
  }

  async start() {
    const child = spawn('redis-server', this.args, { stdio: 'ignore' })
    this.child = child
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()))
    running.add(child)
    void this.#exited.then(() => running.delete(child))
    if (!(await until(async () => (await this.call('PING')) === 'PONG', 20_000))) {
      throw new Error(`redis ${this.name} did not start on port ${this.port}`)
    }
  }

  /** SIGKILL by default: the process dies with its sockets, as in a crash. */
  async kill(signal: NodeJS.Signals = 'SIGKILL') {
    if (!this.alive) return
    this.child!.kill('SIGCONT')
    this.child!.kill(signal)
    await this.#exited
  }

  pause() {
    if (this.alive) this.child!.kill('SIGSTOP')
  }

  resume() {
    if (this.alive) this.child!.kill('SIGCONT')
  }

  /** One command on a short-lived connection; undefined when the server does not answer. */
  async call(...command: string[]): Promise<unknown> {
    const redis = new Redis({
      host: '127.0.0.1',
      port: this.port,
      lazyConnect: true,
      connectTimeout: 1000,
      commandTimeout: 1000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    redis.on('error', () => {})
    try {
      await redis.connect()
      return await redis.call(command[0], ...command.slice(1))
    } catch {
      return undefined
    } finally {
      redis.disconnect()
    }
  }
}

const running = new Set<ChildProcess>()
// A test run that throws or is interrupted leaves no Redis behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 50) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return true
    } catch {}
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

export interface SentinelSetOptions {
  downAfterMs?: number
  failoverTimeoutMs?: number
}

/**
 * A Redis master and one replica (no persistence) watched by three Sentinels
 * (quorum 2, master name 'gw'), on free ports in a temporary directory. Every
 * address announced is 127.0.0.1.
 */
export class RedisSentinelSet {
  master!: RedisProcess
  replica!: RedisProcess
  sentinels: RedisProcess[] = []

  private constructor(readonly directory: string) {}

  static async start(options: SentinelSetOptions = {}) {
    const set = new RedisSentinelSet(await mkdtemp(join(tmpdir(), 'gateway-sentinel-')))
    try {
      await set.#start(options.downAfterMs ?? 1500, options.failoverTimeoutMs ?? 3000)
    } catch (error) {
      await set.stop()
      throw error
    }
    return set
  }

  /** REDIS_SENTINELS for a gateway process. */
  get sentinelsEnv() {
    return this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',')
  }

  get sentinelAddresses() {
    return this.sentinels.map((sentinel) => ({ host: '127.0.0.1', port: sentinel.port }))
  }

  get servers() {
    return [this.master, this.replica]
  }

  async #start(downAfterMs: number, failoverTimeoutMs: number) {
    const data = async (name: string, replicaOf?: number) => {
      const port = await freePort()
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
        this.directory,
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
      if (replicaOf) args.push('--replicaof', '127.0.0.1', String(replicaOf))
      return new RedisProcess(name, port, args)
    }
    this.master = await data('master')
    await this.master.start()
    this.replica = await data('replica', this.master.port)
    await this.replica.start()
    if (!(await until(async () => this.#replicaOnline(), 20_000))) {
      throw new Error('the replica did not finish its first sync')
    }

    for (let i = 1; i <= 3; i++) {
      const port = await freePort()
      const config = join(this.directory, `sentinel${i}.conf`)
      // Sentinel rewrites its configuration file (it records the new master there).
      await writeFile(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${this.directory}`,
          'sentinel announce-ip 127.0.0.1',
          `sentinel announce-port ${port}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${this.master.port} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
          `sentinel failover-timeout ${MASTER_NAME} ${failoverTimeoutMs}`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n')
      )
      const sentinel = new RedisProcess(`sentinel${i}`, port, [config, '--sentinel'])
      this.sentinels.push(sentinel)
      await sentinel.start()
    }
    // Ready once every Sentinel knows the replica and the two other Sentinels.
    const ready = await until(async () => {
      for (const sentinel of this.sentinels) {
        const reply = (await sentinel.call('SENTINEL', 'MASTER', MASTER_NAME)) as string[]
        const field = (key: string) => Number(reply[reply.indexOf(key) + 1])
        if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false
      }
      return true
    }, 30_000)
    if (!ready) throw new Error('the Sentinels did not discover each other and the replica')
  }

  async #replicaOnline() {
    const info = String(await this.master.call('INFO', 'replication'))
    return /connected_slaves:1/.test(info) && /state=online/.test(info)
  }

  /** The master's port as a majority of the live Sentinels name it; undefined while they disagree. */
  async masterPort(): Promise<number | undefined> {
    const votes = new Map<number, number>()
    for (const sentinel of this.sentinels) {
      if (!sentinel.alive) continue
      const reply = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as
        [string, string] | undefined
      if (reply) votes.set(Number(reply[1]), (votes.get(Number(reply[1])) ?? 0) + 1)
    }
    for (const [port, count] of votes) if (count >= 2) return port
    return undefined
  }

  /**
   * Waits until the Sentinels name `server` master and it says so itself;
   * returns whether it happened within `timeoutMs`.
   */
  async promoted(server: RedisProcess, timeoutMs: number) {
    return until(
      async () =>
        (await this.masterPort()) === server.port &&
        String(await server.call('INFO', 'replication')).includes('role:master'),
      timeoutMs
    )
  }

  /**
   * Stops replication to the replica for good while the master goes on: the
   * replica is paused, and the master drops its link to it. Pausing alone is
   * not enough: the master keeps writing into the paused replica's socket,
   * the kernel buffers it, and the replica applies those writes when it is
   * resumed, even after the master died (its FIN comes after the data).
   */
  async cutReplica() {
    this.replica.pause()
    await this.master.call('CLIENT', 'KILL', 'TYPE', 'replica')
  }

  async stop() {
    await Promise.all([...this.sentinels, this.master, this.replica].map((s) => s?.kill()))
    await rm(this.directory, { recursive: true, force: true })
  }
}
