import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { verifyLedger } from '#ledger/verify'
import { startSecondGateway } from '#tests/helpers/second_process'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

function withdrawOn(
  baseUrl: string | undefined,
  who: TestMerchant,
  fields: Record<string, unknown>
) {
  return signedPost('/withdraw/create', who, authBody(who, { ...PAYOUT_FIELDS, ...fields }), {
    baseUrl,
  })
}

test.group('withdrawals under concurrency, two gateway processes', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway()
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('200 concurrent withdrawals never overdraw and the ledger stays balanced', async ({
    assert,
  }) => {
    // 10,000.00 available; each withdrawal takes 100.00 + 3.00 fee → at most 97 fit.
    const who = await createPayoutMerchant(10_000_00, { withdrawFeeFlat: 3_00 })
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        withdrawOn(i % 2 === 0 ? undefined : second.url, who, { merchant_order_id: `C${i}` })
      )
    )
    const accepted = responses.filter((response) => response.status === 200)
    const refused = responses.filter((response) => response.status !== 200)
    assert.equal(accepted.length, 97)
    assert.isTrue(
      refused.every(
        (r) =>
          r.status === 400 &&
          r.json.error === 'invalid-inputs' &&
          /insufficient balance/.test(r.json.message)
      ),
      refused
        .slice(0, 2)
        .map((r) => r.text)
        .join('\n')
    )
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 9, freeze_balance: 9991, unsettle_balance: 0 })

    const orders = await db.from('payout_orders').count('* as total').first()
    assert.equal(Number(orders.total), 97)
    const result = await verifyLedger()
    assert.deepEqual(result.drifts, [])
  })

  test('the 3-minute duplicate rule holds when identical withdrawals race', async ({ assert }) => {
    const who = await createPayoutMerchant(10_000_00, { withdrawDuplicateCheck: true })
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        withdrawOn(i % 2 === 0 ? undefined : second.url, who, { merchant_order_id: `D${i}` })
      )
    )
    const statuses = responses.map((response) => response.status)
    assert.equal(
      statuses.filter((status) => status === 200).length,
      1,
      responses.map((r) => r.text).join('\n')
    )
    assert.equal(statuses.filter((status) => status === 409).length, 29)
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 9900, freeze_balance: 100, unsettle_balance: 0 })
  })
})
