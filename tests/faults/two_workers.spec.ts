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

const WITHDRAWALS = 120
const PAYMENTS = 40

test.group('c. two workers racing', () => {
  test('two queue:work processes on one Redis and database post and call back once per order', async ({
    assert,
  }) => {
    const s = new Scenario(
      `c. two workers racing (${WITHDRAWALS} withdrawals, ${PAYMENTS} payments)`
    )
    const agent = keepAliveAgent(10)
    try {
      const merchant = await createMerchant('two-workers', 1_000_000_00)
      const web = await startWeb()
      s.track(web.process)
      const [first, second] = await Promise.all([startWorker('worker-a'), startWorker('worker-b')])
      s.track(first)
      s.track(second)
      const client = merchantClient(merchant, web)
      // Three withdrawals to one payment: 160 creates from 10 connections.
      const load = new Load(client, {
        concurrency: 10,
        mix: ['payment', 'withdraw', 'withdraw', 'withdraw'],
        notifyUrl: world().receiver.url,
        agent,
      })
      const started = Date.now()
      await load.runCount(WITHDRAWALS + PAYMENTS)
      const loadMs = Date.now() - started
      s.report.addLatency('creates', load.samples)
      s.report.add('load time', `${(loadMs / 1000).toFixed(1)} s`)
      s.expect(
        load.samples.every((sample) => sample.json?.success === true),
        'some creates failed (see the creates row)'
      )

      // Half of the payments are paid; the others expire after the order TTL.
      const payments = load.createdPayments()
      const paid = await payOrders(payments.filter((_, index) => index % 2 === 0))
      s.report.add('payments paid', `${paid.matched} of ${payments.length} (the rest expire)`)

      // The rest outlive their TTL at once; the workers' sweeps expire them.
      s.report.add('payments left to expire', String(await letMerchantPaymentsExpire(merchant)))
      const final = await s.settle(merchant, 2 * TIMINGS.SWEEP_INTERVAL_MS + 30_000)
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
