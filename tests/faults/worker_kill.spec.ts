import { test } from '@japa/runner'
import {
  createMerchant,
  merchantClient,
  startWeb,
  startWorker,
} from '#tests/faults/helpers/gateway'
import { isSuccess } from '#tests/faults/helpers/client'
import { DATABASE, QUEUE_PREFIX, TIMINGS, world } from '#tests/faults/helpers/world'
import { sleep, until } from '#tests/faults/helpers/processes'
import { Redis } from 'ioredis'
import { Scenario } from '#tests/faults/helpers/scenario'

/** ms after the last create response of a round at which the worker is SIGKILLed. */
const KILL_DELAYS = [0, 50, 100, 150, 200, 250, 400]
/**
 * Withdrawals per round, created at once: half paid by the sandbox bank, half
 * rejected. A burst keeps several orders in flight when the kill lands, each
 * at another step of its dispatch.
 */
const ACCOUNTS = [
  '1234567890',
  '5550000002',
  '1234567891',
  '5550000001',
  '1234567892',
  '5550000003',
]
const BURST = 12
/**
 * The narrowest moment of dispatch, between the bank hand-over (the sandbox
 * outcome job is written to Redis) and the order's move to pending, is hit by
 * killing the worker on the Redis keyspace event of that job; rounds repeat
 * until that many kills landed before the move (at most HANDOVER_ROUNDS).
 */
const WANTED_MID_HANDOVER = 2
const HANDOVER_ROUNDS = 6
/**
 * The replacement worker (up in a few seconds) must come up within the lock
 * of the dead worker's jobs, as a supervisor's restart does in production
 * (lock 30 s): 10 s here instead of the suite's 3 s.
 */
const LOCK_MS = 10_000

test.group('b. worker SIGKILL during payout dispatch', () => {
  test('every withdrawal reaches success or failed exactly once', async ({ assert }) => {
    const s = new Scenario('b. worker SIGKILLed at several moments of payout dispatch')
    try {
      const merchant = await createMerchant('worker-kill', 100_000_00)
      const web = await startWeb()
      s.track(web.process)
      const client = merchantClient(merchant, web)
      const notifyUrl = world().receiver.url
      const startOne = (name: string) =>
        startWorker(name, { env: { QUEUE_LOCK_DURATION_MS: String(LOCK_MS) } })
      // One worker at a time: every job in flight at a kill was the dead worker's.
      let worker = s.track(await startOne('worker-1'))
      const caught = { new: 0, queue: 0, handedOver: 0, pending: 0, final: 0 }
      const rounds: Array<{ moment: string; orders: string[]; atKill: string; killedAt: number }> =
        []
      const create = (account: string) =>
        client.post(
          '/withdraw/create',
          client.body(client.withdrawFields(account, '20.00', notifyUrl))
        )
      // A warm worker (job code loaded, nothing in flight), as in production.
      const warmUp = async (label: string) => {
        for (const account of ACCOUNTS.slice(0, 2)) {
          const response = await create(account)
          s.expect(isSuccess(response), `${label}: warm-up create answered ${response.status}`)
          await until(
            async () =>
              ['success', 'failed'].includes(
                await statusOf(response.json?.data?.platform_order_id)
              ),
            10_000,
            50
          )
        }
      }

      for (const delay of KILL_DELAYS) {
        await warmUp(`kill at ${delay} ms`)
        const created = await Promise.all(
          Array.from({ length: BURST }, (_, index) => create(ACCOUNTS[index % ACCOUNTS.length]))
        )
        await sleep(delay)
        await worker.kill()
        const killedAt = Date.now()
        const orders = created
          .filter(isSuccess)
          .map((response) => String(response.json.data.platform_order_id))
        s.expect(
          orders.length === BURST,
          `kill at ${delay} ms: creates answered ${created.map((r) => r.status).join(', ')}`
        )
        // A COMMIT the worker sent just before it died may still be landing.
        await sleep(300)
        rounds.push({
          moment: `${delay} ms`,
          orders,
          atKill: await statesAtKill(orders, caught),
          killedAt,
        })
        worker = s.track(await startOne(`worker-${rounds.length + 1}`))
      }

      let handOverKills = 0
      const beforeHandOver = caught.handedOver
      for (
        let round = 0;
        round < HANDOVER_ROUNDS && caught.handedOver - beforeHandOver < WANTED_MID_HANDOVER;
        round++
      ) {
        await warmUp('kill at hand-over')
        const victim = worker
        const handedOver = killOnHandOver(() => victim.signalGroup('SIGKILL'))
        await handedOver.ready
        const response = await create(ACCOUNTS[round % 2])
        const fired = await handedOver.fired
        await victim.kill()
        const killedAt = Date.now()
        handOverKills++
        s.expect(
          isSuccess(response) || response.status === 0,
          `kill at hand-over: create answered ${response.status}`
        )
        const orders = isSuccess(response) ? [String(response.json.data.platform_order_id)] : []
        // A COMMIT the worker sent just before it died may still be landing.
        await sleep(300)
        rounds.push({
          moment: fired ? 'hand-over' : 'hand-over (no event)',
          orders,
          atKill: await statesAtKill(orders, caught),
          killedAt,
        })
        worker = s.track(await startOne(`worker-${rounds.length + 1}`))
      }
      const lastKill = Date.now()

      // A job held by a killed worker is stalled after the lock duration; a
      // lost step is for the sweep; then a margin for callbacks.
      const bound = LOCK_MS + TIMINGS.SWEEP_INTERVAL_MS + 20_000
      await s.settle(merchant, bound)
      const withdrawals = rounds.reduce((total, round) => total + round.orders.length, 0)
      s.report.add(
        'kills',
        `${rounds.length} SIGKILLs (${KILL_DELAYS.length} at ${KILL_DELAYS.join('/')} ms after a burst of ${BURST}, ${handOverKills} at the bank hand-over of one), ${withdrawals} withdrawals`
      )
      s.report.add(
        'orders at the kills',
        `new ${caught.new}, queue before bank ${caught.queue}, queue after bank hand-over ${caught.handedOver}, pending ${caught.pending}, final ${caught.final}`
      )
      s.report.add(
        'bound for recovery',
        `${bound / 1000} s after the kill (worker lock ${LOCK_MS / 1000} s)`
      )
      s.expect(
        caught.handedOver >= 1,
        'harness: no kill landed between the bank hand-over and pending; the scenario did not exercise that window'
      )

      const rows = await world().mariadb.query(
        'SELECT platform_order_id, status, done_at FROM payout_orders WHERE merchant_id = ?',
        [merchant.id],
        DATABASE
      )
      const byId = new Map(rows.map((row) => [row.platform_order_id, row]))
      let late = 0
      let slowestOverall = 0
      for (const round of rounds) {
        const outcome: Record<string, number> = {}
        let slowest = 0
        for (const id of round.orders) {
          const row = byId.get(id)
          const status = row?.status ?? 'missing'
          outcome[status] = (outcome[status] ?? 0) + 1
          // From the kill to the final state (or to now, for an order still open).
          const doneAt = row?.done_at ? new Date(row.done_at).getTime() : Date.now()
          const recovery = Math.max(0, doneAt - round.killedAt)
          slowest = Math.max(slowest, recovery)
          if (recovery > bound) late++
        }
        slowestOverall = Math.max(slowestOverall, slowest)
        const summary = Object.entries(outcome)
          .map(([status, n]) => `${status} ${n}`)
          .join(', ')
        s.report.add(
          `kill at ${round.moment}`,
          `at kill: ${round.atKill || 'no order'} → ${summary || '-'}; slowest final ${(slowest / 1000).toFixed(1)} s after the kill`
        )
      }
      s.expect(
        late === 0,
        `${late} withdrawal(s) not final within ${bound / 1000} s of their kill (slowest ${(slowestOverall / 1000).toFixed(1)} s)`
      )
      s.report.add(
        'checked',
        `${((Date.now() - lastKill) / 1000).toFixed(1)} s after the last kill`
      )
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      await s.close(assert)
    }
  })
})

/**
 * Calls `kill` the moment a sandbox outcome job is written to Redis (keyspace
 * notification on the private Redis): the worker dies between handing the
 * payout to the bank and recording that it did, the narrowest window.
 */
function killOnHandOver(kill: () => void) {
  const redis = world().redis
  const subscriber = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true })
  subscriber.on('error', () => {})
  let resolveFired: (fired: boolean) => void
  const fired = new Promise<boolean>((resolve) => {
    resolveFired = resolve
  })
  subscriber.on('pmessage', () => {
    kill()
    resolveFired(true)
  })
  const timer = setTimeout(() => resolveFired(false), 5000)
  const ready = (async () => {
    await subscriber.connect()
    await subscriber.config('SET', 'notify-keyspace-events', 'Kh')
    await subscriber.psubscribe(`__keyspace@0__:${QUEUE_PREFIX}:payouts:sandbox-outcome-*`)
  })()
  return {
    ready,
    fired: fired.finally(() => {
      clearTimeout(timer)
      subscriber.disconnect()
    }),
  }
}

/**
 * Where each order of the round stood when its worker died: still new, in
 * queue before the sandbox bank got it, in queue with the bank's outcome job
 * already scheduled (handed over, not yet marked pending), pending or final.
 */
async function statesAtKill(orders: string[], caught: Record<string, number>) {
  const rows = await world().mariadb.query(
    'SELECT platform_order_id, status FROM payout_orders WHERE platform_order_id IN (?)',
    [orders],
    DATABASE
  )
  const here: Record<string, number> = {}
  for (const row of rows) {
    let state = ['new', 'queue', 'pending'].includes(row.status) ? row.status : 'final'
    if (state === 'queue') {
      const jobKey = `${QUEUE_PREFIX}:payouts:sandbox-outcome-${row.platform_order_id}`
      if (await world().redis.command((redis) => redis.exists(jobKey))) state = 'handedOver'
    }
    here[state] = (here[state] ?? 0) + 1
    caught[state] = (caught[state] ?? 0) + 1
  }
  return Object.entries(here)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ')
}

async function statusOf(platformOrderId: string) {
  const [row] = await world().mariadb.query(
    'SELECT status FROM payout_orders WHERE platform_order_id = ?',
    [platformOrderId],
    DATABASE
  )
  return String(row?.status)
}
