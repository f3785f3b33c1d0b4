import { join } from 'node:path'
import { Redis } from 'ioredis'
import { ManagedProcess, StopWaiting, freePort, until } from '#tests/faults/helpers/processes'

/**
 * A private Redis server without persistence (no RDB, no AOF): a restart
 * comes back empty, as a crashed cache node or a fresh container would, so
 * every queued job and schedule of the gateway is gone.
 */
export class RedisInstance {
  port = 0
  process?: ManagedProcess
  starts = 0

  constructor(readonly directory: string) {}

  async init() {
    this.port = await freePort()
    await this.start()
  }

  async start() {
    this.starts++
    this.process = new ManagedProcess(
      'redis',
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.directory,
        '--daemonize',
        'no',
      ],
      { logFile: join(this.directory, 'redis.log') }
    )
    const ready = await until(async () => {
      if (!this.process!.alive) throw new StopWaiting('redis-server exited')
      return (await this.command((redis) => redis.ping())) === 'PONG'
    }, 20_000).catch(() => false)
    if (!ready) throw new Error(`Redis did not start:\n${await this.process.tail()}`)
  }

  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') {
    if (!this.process) return
    if (signal === 'SIGKILL') await this.process.kill()
    else await this.process.stop('SIGTERM', 20_000)
  }

  /** Runs `work` on a fresh connection and closes it. */
  command<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
    return redisCommand(this.port, work)
  }
}

/**
 * Runs `work` on a fresh connection to the Redis (or Sentinel) on `port` and
 * closes it: the checks of a run that kills servers never reuse a connection
 * to a server that may have been replaced since.
 */
export async function redisCommand<T>(port: number, work: (redis: Redis) => Promise<T>) {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await work(redis)
  } finally {
    redis.disconnect()
  }
}
