import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { startSecondGateway } from '#tests/helpers/second_process'
import { closedPort } from '#tests/helpers/ports'
import { rawRequest } from '#tests/helpers/http'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  creditMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/**
 * A gateway process whose Redis is unreachable answers every call within
 * about a second, and goes on: every call the API takes is kept correct by
 * the database alone (a request sent twice is found by its row there).
 */
/**
 * "Fails fast": well under the 6–12 s hangs this guards against. Redis's
 * command timeout is about 1 s; the margin absorbs a busy CI machine. The
 * fault suite measures the latency figures themselves.
 */
const FAST_MS = 3000

test.group('Redis down', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway({
      env: { REDIS_PORT: String(await closedPort()) },
      anyHealthAnswer: true,
    })
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  async function timed(promise: Promise<any>) {
    const started = Date.now()
    const response = await promise
    return { response, ms: Date.now() - started }
  }

  test('reads and creates answer at once, a withdrawal too, and the same bytes still run once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ payoutRoute: 'sandbox' })
    await createDepositAccount({ channel: 'transfer' })
    await creditMerchant(who.merchant, 'available', 1000_00)
    const options = { baseUrl: second.url }

    const health = await timed(rawRequest('/health', { method: 'GET', baseUrl: second.url }))
    assert.equal(health.response.status, 503)
    assert.equal(health.response.json.checks.redis.status, 'down')

    const balance = await timed(signedPost('/balance', who, authBody(who), options))
    assert.equal(balance.response.status, 200, balance.response.text)
    assert.isBelow(balance.ms, FAST_MS)

    const payment = await timed(
      signedPost(
        '/payment/create-transfer',
        who,
        authBody(who, {
          merchant_order_id: 'RD1',
          amount: '100.00',
          bank: 'KBANK',
          account_name: 'Somchai',
          account_no: '1234567890',
        }),
        options
      )
    )
    assert.equal(payment.response.status, 200, payment.response.text)
    assert.isBelow(payment.ms, FAST_MS)

    const withdrawalBody = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'RD2' })
    const withdrawal = await timed(signedPost('/withdraw/create', who, withdrawalBody, options))
    assert.equal(withdrawal.response.status, 200, withdrawal.response.text)
    assert.isBelow(withdrawal.ms, FAST_MS)
    // Its response lost, the merchant sends it again: the same answer, one withdrawal.
    const again = await signedPost('/withdraw/create', who, withdrawalBody, options)
    assert.equal(again.text, withdrawal.response.text)
    const payouts = await db
      .from('payout_orders')
      .where('kind', 'withdraw')
      .count('* as total')
      .first()
    assert.equal(Number(payouts.total), 1)

    const settlement = await timed(
      signedPost(
        '/thb-settlement/create',
        who,
        authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'RD3', amount: '200.00' }),
        options
      )
    )
    assert.equal(settlement.response.status, 200, settlement.response.text)
    assert.isBelow(settlement.ms, FAST_MS)
  })
})
