import { test } from '@japa/runner'
import { assertError } from '#tests/helpers/envelope'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { completePayout } from '#payouts/actions/complete_payout'
import {
  authBody,
  createPayoutMerchant,
  createTestMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
  withMarker,
  updatePlatforms,
} from '#tests/helpers/merchants'

function settle(who: TestMerchant, fields: Record<string, unknown> = {}) {
  return signedPost(
    '/thb-settlement/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'S1', amount: '1000.00', ...fields })
  )
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

test.group('THB settlement', (group) => {
  group.each.setup(() => resetDatabase())

  test('create: marker M, flat fee in the answer and in the hold, status open', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(5000_00, {
      settlementFeeFlat: 25_00,
      withdrawFeeFlat: 99_00,
    })
    const response = await settle(who)
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(Object.keys(response.json.data), [
      'platform_order_id',
      'merchant_order_id',
      'order_datetime',
      'amount',
      'fee',
      'bank',
      'account_no',
      'account_name',
      'status',
    ])
    assert.equal(response.json.data.platform_order_id[3], 'M')
    assert.include(response.text, '"amount":1000.00,"fee":25.00,')
    assert.equal(response.json.data.status, 'open')
    assert.deepEqual(await balance(who), {
      balance: 3975,
      freeze_balance: 1025,
      unsettle_balance: 0,
    })
  })

  test('409 duplicate-entry on a reused merchant_order_id, at once, for 7 days', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(50000_00)
    const racing = await Promise.all(Array.from({ length: 8 }, () => settle(who)))
    assert.deepEqual(racing.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409])
    assert.deepEqual(await balance(who), {
      balance: 49000,
      freeze_balance: 1000,
      unsettle_balance: 0,
    })
    // A withdrawal or a payment with the same merchant_order_id is another family.
    assert.equal(
      (
        await signedPost(
          '/withdraw/create',
          who,
          authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'S1' })
        )
      ).status,
      200
    )
    await db
      .from('merchant_order_ids')
      .where('scope', 'settlement')
      .update({ reserved_at: DateTime.utc().minus({ days: 8 }).toJSDate() })
    assert.equal((await settle(who)).status, 200)
  })

  test('amount range per merchant (typically 100 to 500,000) and insufficient balance', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { settlementFeeFlat: 10_00 })
    assertError(
      assert,
      await settle(who, { amount: '99.99' }),
      400,
      'invalid-inputs',
      /at least 100.00/
    )
    assertError(
      assert,
      await settle(who, { amount: '500000.01' }),
      400,
      'invalid-inputs',
      /at most 500000.00/
    )
    assertError(
      assert,
      await settle(who, { amount: '995.00' }),
      400,
      'invalid-inputs',
      /insufficient balance: amount \+ fee = 1005.00/
    )
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
    // The id of a refused settlement is still free.
    assert.equal((await settle(who, { amount: '990.00' })).status, 200)
  })

  test('403 when settlements or withdrawals are disabled, or outside settlement hours; 404 without route', async ({
    assert,
  }) => {
    const noSettle = await createPayoutMerchant(5000_00, { settlementEnabled: false })
    assertError(
      assert,
      await settle(noSettle),
      403,
      'permission-denied',
      /settlements are disabled/
    )
    const noWithdraw = await createPayoutMerchant(5000_00, { withdrawEnabled: false })
    assertError(assert, await settle(noWithdraw), 403, 'permission-denied')

    const who = await createPayoutMerchant(5000_00)
    const now = DateTime.utc().setZone('Asia/Bangkok')
    await updatePlatforms({
      settlementOpenFrom: now.plus({ hours: 2 }).toFormat('HH:mm'),
      settlementOpenTo: now.plus({ hours: 3 }).toFormat('HH:mm'),
    })
    assertError(
      assert,
      await settle(who),
      403,
      'permission-denied',
      /settlements are accepted from/
    )
    // Withdrawals are not bound by settlement hours.
    assert.equal(
      (await signedPost('/withdraw/create', who, authBody(who, PAYOUT_FIELDS))).status,
      200
    )
    await updatePlatforms({ settlementOpenFrom: null, settlementOpenTo: null })
    assert.equal((await settle(who)).status, 200)

    const unrouted = await createTestMerchant()
    assertError(assert, await settle(unrouted), 404, 'not-found')
  })

  test('query: marker M only; open then failed; 404 for another merchant', async ({ assert }) => {
    const who = await createPayoutMerchant(5000_00)
    const other = await createPayoutMerchant(5000_00)
    const id = (await settle(who)).json.data.platform_order_id
    const query = (as: TestMerchant, value: unknown) =>
      signedPost('/thb-settlement/query', as, authBody(as, { platform_order_id: value }))
    const open = await query(who, id)
    assert.deepEqual(Object.keys(open.json.data), [
      'platform_order_id',
      'merchant_order_id',
      'order_datetime',
      'amount',
      'bank',
      'account_no',
      'account_name',
      'status',
      'done_datetime',
    ])
    assert.equal(open.json.data.status, 'open')
    const order = await PayoutOrder.findByOrFail('platform_order_id', id)
    await PayoutOrder.query().where('id', order.id).update({ status: 'pending' })
    await completePayout(order.id, { success: false, reason: 'name_mismatch' })
    assert.equal((await query(who, id)).json.data.status, 'failed')
    assert.deepEqual(await balance(who), { balance: 5000, freeze_balance: 0, unsettle_balance: 0 })
    assertError(assert, await query(who, withMarker(id, 'W')), 400, 'invalid-inputs', /marker M/)
    assertError(assert, await query(other, id), 404, 'not-found')
    // A withdraw id on the settlement query is refused even when it exists.
    const withdrawId = (await signedPost('/withdraw/create', who, authBody(who, PAYOUT_FIELDS)))
      .json.data.platform_order_id
    assertError(assert, await query(who, withdrawId), 400, 'invalid-inputs')
  })
})
