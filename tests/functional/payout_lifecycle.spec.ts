import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import Merchant from '#merchants/models/merchant'
import { completePayout } from '#payouts/actions/complete_payout'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { dispatch, queue } from '#core/queue/queue_manager'
import { registerSchedules } from '#core/queue/schedules'
import { startTestWorker, until } from '#tests/helpers/worker'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

async function create(who: TestMerchant, path: string, fields: Record<string, unknown>) {
  const response = await signedPost(
    path,
    who,
    authBody(who, { ...PAYOUT_FIELDS, notify_url: 'https://merchant.example.test/cb', ...fields })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PayoutOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

async function callbacks(order: PayoutOrder) {
  return db.from('callback_outbox').where({ order_type: order.kind, order_id: order.id })
}

test.group('payout lifecycle on the worker and the sandbox bank', (group) => {
  let stopWorker: () => Promise<void>
  group.each.setup(async () => {
    await resetDatabase()
    await queue('payouts').obliterate({ force: true })
    stopWorker = startTestWorker('payouts')
    return () => stopWorker()
  })
  group.each.timeout(30_000)

  test('success: new → queue → pending → success, hold consumed, one SUCCESS callback', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { withdrawFeeFlat: 5_00 })
    const order = await create(who, '/withdraw/create', { merchant_order_id: 'OK1' })
    assert.isTrue(
      await until(async () => (await order.refresh()).status === 'success', 10_000),
      order.status
    )
    assert.equal(order.connectorReference, `SBXB${String(order.id).padStart(12, '0')}`)
    assert.equal(order.holdState, 'consumed')
    assert.isNotNull(order.doneAt)
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 0, unsettle_balance: 0 })

    const rows = await callbacks(order)
    assert.lengthOf(rows, 1)
    const body = JSON.parse(rows[0].body)
    assert.deepEqual(Object.keys(body), [
      'merchant_id',
      'platform_order_id',
      'merchant_order_id',
      'mode',
      'bank',
      'account_no',
      'account_name',
      'amount',
      'status',
      'timestamp',
    ])
    assert.equal(body.mode, 'WITHDRAW')
    assert.equal(body.status, 'SUCCESS')
    assert.include(rows[0].body, '"amount":100.00')

    // Completing again (a retried job, a late duplicate answer) changes nothing.
    assert.isFalse(await completePayout(order.id, { success: false, reason: 'late' }))
    assert.isFalse(await completePayout(order.id, { success: true }))
    assert.lengthOf(await callbacks(order), 1)
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('failure cases of the sandbox bank return the hold and send FAIL', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00, { withdrawFeeFlat: 5_00 })
    const cases = [
      ['1234560001', 'account_closed'],
      ['1234560002', 'name_mismatch'],
      ['1234560003', 'insufficient_funds_at_bank'],
    ]
    const orders = []
    for (const [index, [accountNo]] of cases.entries()) {
      orders.push(
        await create(who, '/withdraw/create', {
          merchant_order_id: `F${index}`,
          account_no: accountNo,
        })
      )
    }
    for (const [index, order] of orders.entries()) {
      assert.isTrue(await until(async () => (await order.refresh()).status === 'failed', 10_000))
      assert.equal(order.failureReason, cases[index][1])
      assert.equal(order.holdState, 'returned')
      const rows = await callbacks(order)
      assert.lengthOf(rows, 1)
      assert.equal(JSON.parse(rows[0].body).status, 'FAIL')
    }
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('settlement: same flow, marker M in the WITHDRAW-mode callback', async ({ assert }) => {
    const who = await createPayoutMerchant(5000_00, { settlementFeeFlat: 20_00 })
    const order = await create(who, '/thb-settlement/create', {
      merchant_order_id: 'SET1',
      amount: '1000.00',
    })
    assert.isTrue(await until(async () => (await order.refresh()).status === 'success', 10_000))
    const [row] = await callbacks(order)
    const body = JSON.parse(row.body)
    assert.equal(body.platform_order_id[3], 'M')
    assert.equal(body.mode, 'WITHDRAW')
    assert.equal(body.status, 'SUCCESS')
    assert.deepEqual(await balance(who), { balance: 3980, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('hold timeout: released by the hold sweep, order stays open; a late success then debits balance (negative, flagged)', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(500_00)
    // Account ending 0004: the sandbox bank never answers.
    const silent = await create(who, '/withdraw/create', {
      merchant_order_id: 'T1',
      amount: '300.00',
      account_no: '1234560004',
    })
    assert.isTrue(await until(async () => (await silent.refresh()).status === 'pending', 10_000))
    assert.deepEqual(await balance(who), { balance: 200, freeze_balance: 300, unsettle_balance: 0 })

    await PayoutOrder.query()
      .where('id', silent.id)
      .update({ hold_expires_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    await dispatch('releaseOverdueHolds', {}, { jobId: `test-release-${silent.id}` })
    assert.isTrue(
      await until(async () => (await silent.refresh()).holdState === 'released', 10_000)
    )
    assert.equal(silent.status, 'pending')
    assert.deepEqual(await balance(who), { balance: 500, freeze_balance: 0, unsettle_balance: 0 })
    const query = await signedPost(
      '/withdraw/query',
      who,
      authBody(who, { platform_order_id: silent.platformOrderId })
    )
    assert.equal(query.json.data.status, 'open')
    assert.lengthOf(await callbacks(silent), 0)

    // The merchant spends the released money, then the bank confirms the old transfer.
    const spend = await create(who, '/withdraw/create', {
      merchant_order_id: 'T2',
      amount: '400.00',
    })
    assert.isTrue(await until(async () => (await spend.refresh()).status === 'success', 10_000))
    assert.deepEqual(await balance(who), { balance: 100, freeze_balance: 0, unsettle_balance: 0 })
    assert.isTrue(await completePayout(silent.id, { success: true }))
    assert.deepEqual(await balance(who), { balance: -200, freeze_balance: 0, unsettle_balance: 0 })
    assert.isTrue((await Merchant.findOrFail(who.merchant.id)).negativeBalanceFlag)
    assert.equal(JSON.parse((await callbacks(silent))[0].body).status, 'SUCCESS')
  })

  test('hold timeout on the scheduled sweep, then a late failure moves no money (the hold was already returned)', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(500_00)
    const silent = await create(who, '/withdraw/create', {
      merchant_order_id: 'U1',
      amount: '300.00',
      account_no: '1234560004',
    })
    assert.isTrue(await until(async () => (await silent.refresh()).status === 'pending', 10_000))
    await PayoutOrder.query()
      .where('id', silent.id)
      .update({ hold_expires_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    // No job of its own: the hold sweep's schedule, as a worker registers it, releases it.
    assert.isUndefined(await queue('payouts').getJob(`payout-hold-${silent.platformOrderId}`))
    await registerSchedules(['payouts'])
    assert.isTrue(
      await until(async () => (await silent.refresh()).holdState === 'released', 10_000)
    )
    assert.isTrue(await completePayout(silent.id, { success: false, reason: 'account_closed' }))
    assert.deepEqual(await balance(who), { balance: 500, freeze_balance: 0, unsettle_balance: 0 })
    assert.equal((await silent.refresh()).holdState, 'returned')
  })

  test('dispatching twice moves the order once', async ({ assert }) => {
    await stopWorker()
    stopWorker = async () => {}
    const who = await createPayoutMerchant(500_00)
    const order = await create(who, '/withdraw/create', {
      merchant_order_id: 'V1',
      account_no: '1234560004',
    })
    const results = await Promise.all([
      dispatchPayout(order.id),
      dispatchPayout(order.id),
      dispatchPayout(order.id),
    ])
    assert.include(results, 'pending')
    assert.equal(results.filter((result) => result === 'pending').length, 1)
    assert.equal((await order.refresh()).status, 'pending')
  })
})
