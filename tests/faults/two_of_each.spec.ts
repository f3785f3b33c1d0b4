import { test } from '@japa/runner'
import {
  createMerchant,
  letMerchantPaymentsExpire,
  merchantClient,
  payOrders,
  startWeb,
  startWorker,
} from '#tests/faults/helpers/gateway'
import { keepAliveAgent } from '#tests/faults/helpers/client'
import { Load } from '#tests/faults/helpers/load'
import { TIMINGS, world } from '#tests/faults/helpers/world'
import { Scenario } from '#tests/faults/helpers/scenario'

const WITHDRAWALS = 60
const PAYMENTS = 20

/**
 * The horizontal shape of docs/scaling.md: two web processes and two
 * workers (as on two hosts) against one database and one Redis. Creates go
 * round-robin to both web processes; every order ends once, every callback
 * is delivered once, the ledger balances.
 */
test.group('f. two web processes and two workers', () => {
  test('two of each on one database and Redis: every order final once, callbacks once, ledger green', async ({
    assert,
  }) => {
    const s = new Scenario(
      `f. two web + two workers (${WITHDRAWALS} withdrawals, ${PAYMENTS} payments)`
    )
    const agent = keepAliveAgent(10)
    try {
      const merchant = await createMerchant('two-of-each', 1_000_000_00)
      const [web1, web2] = await Promise.all([startWeb('web-1'), startWeb('web-2')])
      s.track(web1.process)
      s.track(web2.process)
      const [first, second] = await Promise.all([startWorker('worker-a'), startWorker('worker-b')])
      s.track(first)
      s.track(second)
      const load = new Load(merchantClient(merchant, web1), {
        concurrency: 10,
        mix: ['payment', 'withdraw', 'withdraw', 'withdraw'],
        notifyUrl: world().receiver.url,
        agent,
        baseUrls: [web1.url, web2.url],
      })
      await load.runCount(WITHDRAWALS + PAYMENTS)
      s.report.addLatency('creates (both web processes)', load.samples)
      s.expect(
        load.samples.every((sample) => sample.json?.success === true),
        'some creates failed (see the creates row)'
      )

      const payments = load.createdPayments()
      const paid = await payOrders(payments.filter((_, index) => index % 2 === 0))
      s.report.add('payments paid', `${paid.matched} of ${payments.length} (the rest expire)`)

      // The rest outlive their TTL at once; the workers' sweeps expire them.
      s.report.add('payments left to expire', String(await letMerchantPaymentsExpire(merchant)))
      const final = await s.settle(merchant, 2 * TIMINGS.SWEEP_INTERVAL_MS + 30_000)
      s.expect(web1.process.alive && web2.process.alive, 'a web process exited')
      s.expect(first.alive && second.alive, 'a worker exited during the scenario')
      s.expect(
        final.callbacks.duplicateDeliveries === 0,
        `${final.callbacks.duplicateDeliveries} callbacks delivered twice without any fault`
      )
    } catch (error) {
      s.failures.push(`harness: ${(error as Error).stack ?? error}`)
    } finally {
      agent.destroy()
      await s.close(assert)
    }
  })
})
