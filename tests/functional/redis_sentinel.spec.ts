import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { Queue, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { DateTime } from 'luxon'
import redisConfig from '#config/redis'
import { createRedis } from '#core/redis'
import { redisRole } from '#core/health'
import { JOBS, SCHEDULES, type QueueName } from '#jobs/jobs'
import { queue, queuePrefix } from '#core/queue/queue_manager'
import type { WorkerStatus } from '#core/queue/worker_status'
import { callbackJobId } from '#callbacks/enqueue'
import CallbackOutbox from '#callbacks/models/callback_outbox'
import PaymentOrder from '#payments/models/payment_order'
import { expirePayment } from '#payments/actions/expire_payment'
import { RedisSentinelSet, until } from '#tests/helpers/redis_sentinel'
import { startSecondGateway } from '#tests/helpers/second_process'
import { rawRequest } from '#tests/helpers/http'
import { startCallbackReceiver } from '#tests/helpers/callback_receiver'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/**
 * The gateway on Redis Sentinel: a master, a replica and three Sentinels of
 * its own (tests/helpers/redis_sentinel.ts), the gateway's processes started
 * with REDIS_SENTINELS. Failover figures are printed for docs.
 */

/** The test process's connections to the set's master, made as the gateway makes them. */
function sentinelTarget(set: RedisSentinelSet) {
  return { ...redisConfig, sentinels: set.sentinelAddresses, masterName: 'gw' }
}

class SentinelClient {
  redis: Redis
  queues = new Map<QueueName, Queue>()

  constructor(readonly set: RedisSentinelSet) {
    // As queueConnection() does: fails fast, never waits for a reconnect.
    this.redis = createRedis(
      { lazyConnect: false, maxRetriesPerRequest: null, enableOfflineQueue: false },
      sentinelTarget(set)
    )
  }

  queue(name: QueueName) {
    let instance = this.queues.get(name)
    if (!instance) {
      instance = new Queue(name, { connection: this.redis, prefix: queuePrefix })
      instance.on('error', () => {})
      this.queues.set(name, instance)
    }
    return instance
  }

  async missingSchedules() {
    const missing: string[] = []
    for (const schedule of SCHEDULES) {
      if (!(await this.queue(JOBS[schedule.job].queue).getJobScheduler(schedule.id))) {
        missing.push(schedule.id)
      }
    }
    return missing
  }

  async workerStatuses(): Promise<WorkerStatus[]> {
    const [, keys] = await this.redis.scan('0', 'MATCH', `${queuePrefix}:worker:*`, 'COUNT', 1000)
    if (keys.length === 0) return []
    return (await this.redis.mget(...keys)).map((value) => JSON.parse(value!) as WorkerStatus)
  }

  async close() {
    await Promise.all([...this.queues.values()].map((instance) => instance.close()))
    this.redis.disconnect()
  }
}

/** `queue:work` with REDIS_SENTINELS, its log lines kept in `directory`/worker.log. */
function startLoggedWorker(directory: string, env: Record<string, string>) {
  const child = spawn(
    'bash',
    [
      '-c',
      `exec "$0" ace.js queue:work >> "$1" 2>&1`,
      process.execPath,
      join(directory, 'worker.log'),
    ],
    {
      cwd: app.appRoot.pathname,
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
      stdio: 'ignore',
    }
  )
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  return {
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

test.group('Redis through Sentinel', (group) => {
  let set: RedisSentinelSet
  let client: SentinelClient
  group.each.timeout(180_000)
  group.each.setup(async () => {
    await resetDatabase()
    set = await RedisSentinelSet.start({ downAfterMs: 1500, failoverTimeoutMs: 3000 })
    client = new SentinelClient(set)
    return async () => {
      await client.close()
      await set.stop()
    }
  })

  test('commands and a BullMQ job go to the master the Sentinels name', async ({ assert }) => {
    assert.isTrue(await until(async () => client.redis.status === 'ready', 10_000))
    await client.redis.set('sentinel-probe', 'ok')
    assert.equal(await client.redis.get('sentinel-probe'), 'ok')
    assert.deepEqual(await redisRole(client.redis), {
      role: 'master',
      address: `127.0.0.1:${set.master.port}`,
    })

    const workerConnection = createRedis(
      { lazyConnect: false, maxRetriesPerRequest: null },
      sentinelTarget(set)
    )
    const processed: unknown[] = []
    const worker = new Worker(
      'operations',
      async (job) => {
        processed.push(job.data)
        return 'done'
      },
      { connection: workerConnection, prefix: queuePrefix }
    )
    try {
      await client.queue('operations').add('probe', { n: 1 }, { jobId: 'probe-1' })
      assert.isTrue(await until(async () => processed.length === 1, 15_000))
      assert.deepEqual(processed, [{ n: 1 }])
      assert.isTrue(
        await until(
          async () => (await client.queue('operations').getJobState('probe-1')) === 'completed',
          5_000
        )
      )
    } finally {
      await worker.close()
      workerConnection.disconnect()
    }
  })

  test('master SIGKILLed: the replica is promoted and a gateway process serves with Redis again', async ({
    assert,
  }) => {
    // On a busy machine a first boot may miss the helper's 30 s: one more try.
    const options = { env: { REDIS_SENTINELS: set.sentinelsEnv } }
    const gateway = await startSecondGateway(options).catch(() => startSecondGateway(options))
    const who = await createDepositMerchant()
    const direct = (port: number) =>
      createRedis(
        { lazyConnect: false, db: redisConfig.db, retryStrategy: () => null },
        {
          ...redisConfig,
          sentinels: undefined,
          host: '127.0.0.1',
          port,
        }
      )
    const redisUp = async () => {
      const health = await rawRequest('/health', { method: 'GET', baseUrl: gateway.url })
      return health.json?.checks?.redis?.status === 'up'
    }
    try {
      assert.isTrue(await redisUp())
      const balance = await signedPost('/balance', who, authBody(who), { baseUrl: gateway.url })
      assert.equal(balance.status, 200, balance.text)

      const killedAt = Date.now()
      await set.master.kill('SIGKILL')
      assert.isTrue(await set.promoted(set.replica, 60_000), 'the replica is promoted')
      const promotedMs = Date.now() - killedAt
      assert.isTrue(await until(redisUp, 30_000), '/health sees Redis again')
      const recoveredMs = Date.now() - killedAt

      // A request whose rate-limit counter lands on the new master.
      const newMaster = direct(set.replica.port)
      try {
        const replicated = await newMaster.keys('gw:rl:*')
        if (replicated.length > 0) await newMaster.del(...replicated)
        const again = await signedPost('/balance', who, authBody(who), { baseUrl: gateway.url })
        assert.equal(again.status, 200, again.text)
        assert.isNotEmpty(await newMaster.keys('gw:rl:*'))
      } finally {
        newMaster.disconnect()
      }
      console.log(
        `[sentinel failover] master SIGKILL -> replica promoted: ${promotedMs} ms; ` +
          `-> gateway /health sees Redis up: ${recoveredMs} ms`
      )
    } finally {
      await gateway.stop()
    }
  })

  test('lost writes: a worker finds the promoted replica, puts the schedules back and rebuilds the lost job from the database', async ({
    assert,
  }) => {
    const receiver = await startCallbackReceiver()
    const certificateDir = await mkdtemp(join(tmpdir(), 'gateway-ca-'))
    await writeFile(join(certificateDir, 'ca.pem'), receiver.certificate)
    const worker = startLoggedWorker(certificateDir, {
      REDIS_SENTINELS: set.sentinelsEnv,
      // Nothing periodic may do the work within the test's deadline: only the
      // worker noticing the failover does.
      SCHEDULE_CHECK_INTERVAL_MS: '600000',
      SWEEP_INTERVAL_MS: '600000',
      CALLBACK_CA_PATH: join(certificateDir, 'ca.pem'),
      CALLBACK_ALLOW_PRIVATE_TARGETS: 'true',
    })
    let failure: unknown
    try {
      assert.isTrue(
        await until(
          async () =>
            (await client.missingSchedules()).length === 0 &&
            (await client.workerStatuses()).some((status) => status.rebuilt_at !== null),
          60_000
        ),
        'the worker registers its schedules and records the Redis it rebuilt'
      )
      const [started] = await client.workerStatuses()

      // A pending callback row in the database, with its delivery job in Redis.
      const who = await createDepositMerchant()
      receiver.trust(who.merchantId, who.secret)
      await createDepositAccount()
      const created = await signedPost(
        '/payment/create',
        who,
        authBody(who, {
          merchant_order_id: 'RS1',
          amount: '100.00',
          bank: 'KTB',
          account_name: 'Customer',
          account_no: '1234567890',
          notify_url: receiver.url('/rs'),
        })
      )
      assert.equal(created.status, 200, created.text)
      const order = await PaymentOrder.findByOrFail(
        'platform_order_id',
        created.json.data.platform_order_id
      )
      // Expired here, the after-commit hook enqueues the delivery on this
      // process's own Redis (not the Sentinel set's): drop it there.
      assert.isTrue(await expirePayment(order.id, DateTime.utc().plus({ hours: 1 })))
      assert.isTrue(
        await until(
          () =>
            queue('callbacks')
              .obliterate({ force: true })
              .then(() => true),
          10_000
        )
      )
      const row = await CallbackOutbox.query()
        .where({ order_type: 'payment', order_id: order.id })
        .firstOrFail()
      const jobId = callbackJobId(
        { platformOrderId: order.platformOrderId, status: row.status },
        row.series
      )

      // Schedules the replica has, and that the master loses next.
      const lost = ['sweep-payouts', 'settle-payments', 'verify-reconciliation']
      for (const id of lost) {
        const schedule = SCHEDULES.find((entry) => entry.id === id)!
        await client.queue(JOBS[schedule.job].queue).removeJobScheduler(id)
      }
      assert.isTrue(
        await until(async () => {
          const info = String(await set.master.call('INFO', 'replication'))
          const offset = /master_repl_offset:(\d+)/.exec(info)?.[1]
          return offset !== undefined && info.includes(`offset=${offset},`)
        }, 10_000),
        'the replica has every write so far'
      )

      const oldServerInfo = String(await set.master.call('INFO', 'server'))
      // From here on the master's writes never reach the replica.
      await set.cutReplica()
      for (const id of lost) {
        const schedule = SCHEDULES.find((entry) => entry.id === id)!
        const definition = JOBS[schedule.job]
        await client
          .queue(definition.queue)
          .upsertJobScheduler(
            id,
            { every: schedule.everyMs },
            { name: definition.name, data: {}, opts: { attempts: definition.attempts } }
          )
      }
      // The delivery job exists only on the master, due in 10 minutes.
      await client
        .queue('callbacks')
        .add(
          JOBS.deliverCallback.name,
          { outboxId: row.id, series: row.series },
          { jobId, delay: 600_000, attempts: JOBS.deliverCallback.attempts }
        )
      assert.deepEqual(await client.missingSchedules(), [])
      assert.equal(await client.queue('callbacks').getJobState(jobId), 'delayed')

      const killedAt = Date.now()
      await set.master.kill('SIGKILL')
      set.replica.resume()
      // Still a replica (nobody can write to it yet): the writes after the cut are not there.
      const replica = createRedis(
        { lazyConnect: false, db: redisConfig.db, retryStrategy: () => null },
        { ...redisConfig, sentinels: undefined, host: '127.0.0.1', port: set.replica.port }
      )
      try {
        assert.match(String(await replica.info('replication')), /role:slave/)
        assert.equal(await replica.exists(`${queuePrefix}:callbacks:${jobId}`), 0)
        for (const id of lost) {
          const schedule = SCHEDULES.find((entry) => entry.id === id)!
          const repeat = `${queuePrefix}:${JOBS[schedule.job].queue}:repeat`
          assert.isNull(await replica.zscore(repeat, id), id)
        }
        // ...while what was written before the cut is.
        assert.isNotNull(
          await replica.zscore(`${queuePrefix}:callbacks:repeat`, 'dispatch-pending-callbacks')
        )

        assert.isTrue(await set.promoted(set.replica, 90_000), 'the replica is promoted')
        const promotedMs = Date.now() - killedAt
        let seen: unknown
        const back = await until(async () => {
          try {
            seen = await client.missingSchedules()
          } catch (error) {
            seen = `${client.redis.status}: ${error}`
          }
          return Array.isArray(seen) && seen.length === 0
        }, 30_000)
        assert.isTrue(back, `the schedules are back on the new master (${JSON.stringify(seen)})`)
        const schedulesMs = Date.now() - killedAt
        assert.isTrue(
          await until(async () => (await row.refresh()).state === 'delivered', 30_000),
          'the pending callback is delivered'
        )
        const deliveredMs = Date.now() - killedAt
        assert.lengthOf(receiver.calls, 1)
        assert.isTrue(receiver.calls[0].signatureValid)

        // The worker's report says so (its first publish may have failed in the failover's wake).
        assert.isTrue(
          await until(async () => {
            const [status] = await client.workerStatuses()
            return (
              status?.id === started.id &&
              Date.parse(status.rebuilt_at!) > killedAt &&
              status.schedules === 'ok'
            )
          }, 15_000),
          'the worker reports the rebuild'
        )
        // The rebuild's dispatch sweep was added once for this failover, under
        // an id made of the new server's run_id and the old one's.
        const newServerInfo = String(await set.replica.call('INFO', 'server'))
        const newRunId = /run_id:([0-9a-f]+)/.exec(newServerInfo)![1]
        const oldRunId = /run_id:([0-9a-f]+)/.exec(oldServerInfo)![1]
        const rebuildJob = await client
          .queue('callbacks')
          .getJob(`rebuild-dispatch-pending-callbacks-${newRunId}-${oldRunId}`)
        assert.exists(rebuildJob)
        console.log(
          `[sentinel lossy failover] master SIGKILL -> replica promoted: ${promotedMs} ms; ` +
            `schedules back: ${schedulesMs} ms; lost callback delivered: ${deliveredMs} ms`
        )
      } finally {
        replica.disconnect()
      }
    } catch (error) {
      failure = error
    }
    // Stopped while Redis has no master (a failure before the promotion), the
    // worker waits out SHUTDOWN_TIMEOUT_MS and exits 1: its code counts only
    // when the test got through. Cleanup runs whatever happened: an open
    // receiver would keep the test process alive.
    const code = await worker.stop()
    const log = await readFile(join(certificateDir, 'worker.log'), 'utf8').catch(() => '')
    await receiver.close()
    await rm(certificateDir, { recursive: true, force: true })
    if (failure || code !== 0) console.log(log)
    if (failure) throw failure
    assert.equal(code, 0, 'the worker stops cleanly on SIGTERM')
  })

  test('a bad REDIS_SENTINELS stops the process at boot, naming the variable and the entry', async ({
    assert,
  }) => {
    const child = spawn(process.execPath, ['ace.js', 'queue:work'], {
      cwd: app.appRoot.pathname,
      env: { ...process.env, NODE_ENV: 'test', REDIS_SENTINELS: `${set.sentinelsEnv},oops` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    assert.notEqual(code, 0)
    assert.include(output, 'REDIS_SENTINELS: bad entry "oops"')
  })
})
