import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { RedisConnections } from '#core/redis'
import { epochSeconds } from '#core/clock'
import gateway from '#config/gateway'
import { startSecondGateway } from '#tests/helpers/second_process'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

async function payoutCount() {
  const row = await db.from('payout_orders').count('* as total').first()
  return Number(row.total)
}

test.group('replayed requests', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway()
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('the same signed bytes of /withdraw/create pay out once; the replay gets 409 duplicate-entry', async ({
    assert,
  }) => {
    // The 3-minute duplicate check is off: only the replay store stands in the way.
    const who = await createPayoutMerchant(1000_00, { withdrawDuplicateCheck: false })
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R1' })

    const first = await signedPost('/withdraw/create', who, body)
    assert.equal(first.status, 200, first.text)
    const replayed = await signedPost('/withdraw/create', who, body)
    assertError(assert, replayed, 409, 'duplicate-entry', /already received/)
    const elsewhere = await signedPost('/withdraw/create', who, body, { baseUrl: second.url })
    assertError(assert, elsewhere, 409, 'duplicate-entry')

    assert.equal(await payoutCount(), 1)
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 900, freeze_balance: 100, unsettle_balance: 0 })

    // The signature is remembered for twice the time tolerance.
    const redis = (await app.container.make(RedisConnections)).main
    const keys = await redis.keys(`gw:replay:${who.merchantId}:*`)
    assert.lengthOf(keys, 1)
    const ttl = await redis.ttl(keys[0])
    assert.isAbove(ttl, gateway.timeToleranceSeconds * 2 - 5)
    assert.isAtMost(ttl, gateway.timeToleranceSeconds * 2)
  })

  test('identical bytes racing on two processes: exactly one withdrawal', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00)
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R2' })
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        signedPost('/withdraw/create', who, body, { baseUrl: i % 2 ? second.url : undefined })
      )
    )
    const statuses = responses.map((response) => response.status)
    assert.equal(statuses.filter((status) => status === 200).length, 1, statuses.join(','))
    assert.equal(statuses.filter((status) => status === 409).length, 19)
    assert.equal(await payoutCount(), 1)
  })

  test('a fresh request with the same fields is not a replay', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00)
    const fields = { ...PAYOUT_FIELDS, merchant_order_id: 'R3' }
    const now = epochSeconds()
    const first = await signedPost('/withdraw/create', who, authBody(who, fields, now))
    const fresh = await signedPost('/withdraw/create', who, authBody(who, fields, now + 1))
    assert.equal(first.status, 200, first.text)
    assert.equal(fresh.status, 200, fresh.text)
    assert.equal(await payoutCount(), 2)
  })

  test('reads are not replay-guarded: the same /balance or query bytes twice both answer', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const body = authBody(who)
    assert.equal((await signedPost('/balance', who, body)).status, 200)
    assert.equal((await signedPost('/balance', who, body)).status, 200)

    const created = await signedPost(
      '/withdraw/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R4' })
    )
    const query = authBody(who, { platform_order_id: created.json.data.platform_order_id })
    assert.equal((await signedPost('/withdraw/query', who, query)).status, 200)
    assert.equal((await signedPost('/withdraw/query', who, query)).status, 200)
  })

  test('payment and settlement creates refuse replayed bytes too', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' })
    const body = authBody(who, {
      merchant_order_id: 'RP1',
      amount: '100.00',
      bank: 'KBANK',
      account_name: 'Somchai',
      account_no: '1234567890',
    })
    assert.equal((await signedPost('/payment/create-transfer', who, body)).status, 200)
    assertError(
      assert,
      await signedPost('/payment/create-transfer', who, body),
      409,
      'duplicate-entry',
      /already received/
    )
  })
})
