import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  startRedisSentinel,
  type RedisServer,
  type RedisSentinelSet as StartedSet,
} from '../../bin/cluster/redis_sentinel.js'
import { until as pollUntil } from '#tests/faults/helpers/processes'

export type { RedisServer }

/** Polls every 50 ms: failover times are measured with it. */
export function until(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 50) {
  return pollUntil(check, timeoutMs, everyMs)
}

/**
 * The topology's Redis (a master and one replica without persistence,
 * watched by three Sentinels with quorum 2 under the name 'gw'), in its own
 * temporary directory, with what the Sentinel tests ask of it.
 */
export class RedisSentinelSet {
  private constructor(
    readonly directory: string,
    readonly started: StartedSet
  ) {}

  static async start(options: { downAfterMs?: number; failoverTimeoutMs?: number } = {}) {
    const directory = await mkdtemp(join(tmpdir(), 'gateway-sentinel-'))
    try {
      const started = await startRedisSentinel({
        directory,
        downAfterMs: options.downAfterMs ?? 1500,
        failoverTimeoutMs: options.failoverTimeoutMs ?? 3000,
      })
      return new RedisSentinelSet(directory, started)
    } catch (error) {
      await rm(directory, { recursive: true, force: true })
      throw error
    }
  }

  /** The master as started (a replica after a failover). */
  get master() {
    return this.started.servers[0]
  }

  /** The replica as started (the master after a failover). */
  get replica() {
    return this.started.servers[1]
  }

  get sentinels() {
    return this.started.sentinels
  }

  /** REDIS_SENTINELS for a gateway process. */
  get sentinelsEnv() {
    return this.started.sentinelsEnv
  }

  get sentinelAddresses() {
    return this.sentinels.map((sentinel) => ({ host: '127.0.0.1', port: sentinel.port }))
  }

  /** The master's port as a majority of the live Sentinels name it; undefined while they disagree. */
  async masterPort(): Promise<number | undefined> {
    const votes = new Map<number, number>()
    for (const sentinel of this.sentinels) {
      if (!sentinel.alive) continue
      const reply = (await sentinel.call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        this.started.masterName
      )) as [string, string] | undefined
      if (reply) votes.set(Number(reply[1]), (votes.get(Number(reply[1])) ?? 0) + 1)
    }
    for (const [port, count] of votes) if (count >= 2) return port
    return undefined
  }

  /**
   * Waits until the Sentinels name `server` master and it says so itself;
   * returns whether it happened within `timeoutMs`.
   */
  async promoted(server: RedisServer, timeoutMs: number) {
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
    await this.started.stop()
    await rm(this.directory, { recursive: true, force: true })
  }
}
