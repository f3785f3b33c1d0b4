import { test } from '@japa/runner'
import { sleep, until } from '#tests/faults/helpers/processes'
import { ScenarioReport } from '#tests/faults/helpers/report'
import { ledgerVerify, reconcileVerify } from '#tests/cluster_faults/helpers/verify'
import {
  cluster,
  failedOver,
  markFailed,
  redisMaster,
  replicaInSync,
  waitAllUp,
  writerNode,
} from '#tests/cluster_faults/helpers/cluster'
import {
  createBankMerchant,
  endChecks,
  letOpenPaymentsExpire,
  pending,
  preparePlatform,
  type BankMerchant,
} from '#tests/cluster_faults/helpers/bank'
import { MixedLoad } from '#tests/cluster_faults/helpers/mixed_load'
import { runFault, type FaultFigures } from '#tests/cluster_faults/helpers/fault_window'
import { healthy } from '#tests/cluster_faults/helpers/target'

const MERCHANTS = 4

const OPENING_SATANG = 1_000_000_00
const log = (line: string) => console.log(`cluster faults: ${line}`)

/**
 * The topology faults, each once and in sequence on one topology, under one
 * mixed merchant load (payments, withdrawals, settlements, slips, callbacks,
 * statement imports). Each fault prints its figures; the end proves nothing
 * was lost: answered creates, final states, callbacks, ledger and the bank.
 */
test.group('topology faults', () => {
  test('five faults under a mixed load: ≤ 15 s refused per fault, no other failure, nothing lost', async ({
    assert,
  }) => {
    const { topology, target } = cluster()
    const failures: string[] = []
    const figures: FaultFigures[] = []
    const notes: string[] = []
    let load: MixedLoad | undefined
    try {
      const depositAccountId = await preparePlatform(target)
      const merchants: BankMerchant[] = []
      for (let i = 1; i <= MERCHANTS; i++) {
        merchants.push(await createBankMerchant(target, `m${i}`, OPENING_SATANG))
      }
      load = await new MixedLoad(target, merchants, {
        loopsPerMerchant: 2,
        pauseMs: 150,
        depositAccountId,
      }).start()
      await sleep(10_000)
      const baseline = load.attempts.filter((attempt) => attempt.class !== 'ok')
      if (baseline.length > 0) {
        failures.push(`${baseline.length} attempts failed before any fault: ${baseline[0].detail}`)
      }

      // 1. The writer crashes; HAProxy moves to a backup; the node rejoins later.
      let killed = await writerNode()
      figures.push(
        await runFault(
          load,
          `1. SIGKILL of the Galera writer`,
          {
            inject: async () => {
              killed = await writerNode()
              log(`writer is ${killed.name}`)
              await killed.kill('SIGKILL')
            },
            recover: async () => {
              await sleep(10_000)
              await killed.start()
            },
          },
          log
        )
      )
      await waitAllUp()

      // 2. The writer hangs (SIGSTOP) for 20 s, then goes on.
      let paused = killed
      figures.push(
        await runFault(
          load,
          '2. SIGSTOP of the Galera writer for 20 s',
          {
            inject: async () => {
              paused = await writerNode()
              log(`writer is ${paused.name}`)
              paused.pause()
            },
            recover: async () => {
              await sleep(20_000)
              paused.resume()
              await waitAllUp(120_000)
            },
          },
          log
        )
      )

      // 3. The Redis master crashes; Sentinel promotes the replica; the old master comes back as replica.
      let master = await redisMaster()
      let promoted = false
      figures.push(
        await runFault(
          load,
          '3. SIGKILL of the Redis master',
          {
            inject: async () => {
              master = await redisMaster()
              await master.kill('SIGKILL')
            },
            recover: async () => {
              promoted = await failedOver(master.port)
              await master.start()
              await replicaInSync(master.port)
            },
          },
          log
        )
      )
      if (!promoted) failures.push('Sentinel did not promote the replica within 30 s')

      // 4. Rolling restart, one component at a time, health between steps: one window per step.
      const steps: Array<[string, () => Promise<void>]> = []
      for (const node of topology.galera.nodes) {
        steps.push([
          `Galera ${node.name}`,
          async () => {
            await node.kill('SIGTERM')
            await node.start()
            await waitAllUp()
          },
        ])
      }
      steps.push([
        'HAProxy',
        async () => {
          await topology.haproxy.restart()
          await waitAllUp()
        },
      ])
      // Replica first: restarting the master last makes one failover, not two.
      const redisOrder = async () => {
        const first = await redisMaster()
        return [...topology.redis.servers.filter((server) => server !== first), first]
      }
      for (const index of [0, 1]) {
        steps.push([
          index === 0 ? 'Redis replica' : 'Redis master',
          async () => {
            const server = (await redisOrder())[index]
            await server.kill('SIGTERM')
            if (index === 1) await failedOver(server.port)
            await server.start()
            await replicaInSync(server.port)
            await healthy(target)
          },
        ])
      }
      for (const proc of [...topology.webs, ...topology.workers]) {
        steps.push([
          proc.name,
          async () => {
            await proc.stop()
            await proc.start()
            await healthy(target)
          },
        ])
      }
      for (const [name, restart] of steps) {
        figures.push(
          await runFault(
            load,
            `4. rolling restart: ${name}`,
            { inject: async () => {}, recover: restart },
            log
          )
        )
      }

      // 5. One web process and one worker crash; restarted after.
      figures.push(
        await runFault(
          load,
          '5. SIGKILL of one web process and one worker',
          {
            inject: async () => {
              await Promise.all([
                topology.webs[0].kill('SIGKILL'),
                topology.workers[0].kill('SIGKILL'),
              ])
            },
            recover: async () => {
              await sleep(5000)
              await Promise.all([topology.webs[0].start(), topology.workers[0].start()])
              await healthy(target)
            },
          },
          log
        )
      )

      for (const fault of figures) {
        failures.push(...fault.failures.map((failure) => `${fault.title}: ${failure}`))
      }

      // The end: no more load; every order final, every callback delivered; then the checks.
      log('stopping the load; waiting for every order to be final and every callback delivered')
      await load.stop()
      const settleStart = Date.now()
      // The orders still open outlive their TTL at once; the workers' sweeps expire them.
      const leftToExpire = await letOpenPaymentsExpire(target)
      let last = await pending(target)
      const quiet = await until(
        async () => {
          last = await pending(target)
          return last.payments + last.payouts + last.callbacks === 0
        },
        90_000,
        1000
      )
      const summary = new ScenarioReport('end: nothing lost')
      summary.add('payments left to expire at the end', String(leftToExpire))
      summary.add(
        'time to quiescence',
        quiet
          ? `${((Date.now() - settleStart) / 1000).toFixed(1)} s after the load`
          : `not reached: ${JSON.stringify(last)}`
      )
      if (!quiet) failures.push(`orders or callbacks still pending: ${JSON.stringify(last)}`)
      summary.add(
        'statement imports',
        `${load.importRounds.ok} files imported, ${load.importRounds.retried} retried attempts, ${load.importRounds.failed} given up`
      )
      summary.add('slips refused (order no longer open)', String(load.slipsRefused))
      summary.add(
        'operations given up',
        `${load.givenUp.length}${
          load.givenUp.length
            ? `: ${load.givenUp
                .slice(0, 3)
                .map((g) => `${g.kind} ${g.detail}`)
                .join('; ')}`
            : ''
        }`
      )
      if (load.givenUp.length > 0) failures.push(`${load.givenUp.length} operations given up`)
      const end = await endChecks(target, merchants, load)
      for (const [label, value] of end.rows) summary.add(label, value)
      failures.push(...end.problems.slice(0, 20))
      const ledger = await ledgerVerify(target)
      summary.add(
        'ledger:verify',
        ledger.ok ? `green (${ledger.summary})` : `RED: ${ledger.summary}`
      )
      if (!ledger.ok) failures.push(`ledger:verify: ${ledger.summary}`)
      const bank = await reconcileVerify(target)
      summary.add('reconcile:verify', bank.ok ? `green (${bank.summary})` : `RED: ${bank.summary}`)
      if (!bank.ok) failures.push(`reconcile:verify: ${bank.summary}`)

      const overview = new ScenarioReport('topology faults: summary')
      for (const fault of figures) {
        overview.add(
          fault.title,
          `refused ${fault.refusedSeconds} s (${fault.refused503} × 503, ${fault.unanswered} unanswered), ${fault.failed} other failures, full service after ${fault.fullServiceMs === undefined ? 'never' : `${(fault.fullServiceMs / 1000).toFixed(1)} s`}`
        )
      }
      for (const note of notes) summary.add('note', note)
      summary.add('result', failures.length === 0 ? 'PASS' : `FAIL (${failures.length})`)
      summary.print()
      overview.print()
    } catch (error) {
      failures.push(`harness: ${(error as Error).stack ?? error}`)
      await load?.stop().catch(() => {})
    }
    if (failures.length > 0) {
      markFailed(failures)
      console.log(`  failures:\n  - ${failures.join('\n  - ')}`)
    }
    assert.deepEqual(
      failures,
      [],
      `topology fault failures: ${failures.join(' | ').slice(0, 2000)}`
    )
  }).timeout(25 * 60_000)
})
