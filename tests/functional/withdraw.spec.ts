import { test } from '@japa/runner'
import { assertError } from '#tests/helpers/envelope'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { queue } from '#core/queue/queue_manager'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { completePayout, releaseOverdueHolds } from '#payouts/actions/complete_payout'
import { verifyLedger } from '#ledger/verify'
import {
  authBody,
  createPayoutMerchant,
  createTestMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
  withMarker,
} from '#tests/helpers/merchants'

function withdraw(who: TestMerchant, fields: Record<string, unknown> = {}) {
  return signedPost('/withdraw/create', who, authBody(who, { ...PAYOUT_FIELDS, ...fields }))
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

async function payoutCount() {
  return Number((await db.from('payout_orders').count('* as total').first()).total)
}

test.group('withdraw create', (group) => {
  group.each.setup(() => resetDatabase())

  test('answers the spec fields and holds amount + fee', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00, {
      withdrawFeeFlat: 5_00,
      withdrawFeeRateBps: 100,
    })
    const response = await withdraw(who, { notify_url: 'https://merchant.example.test/cb' })
    assert.equal(response.status, 200, response.text)
    const data = response.json.data
    assert.deepEqual(Object.keys(data), [
      'platform_order_id',
      'merchant_order_id',
      'order_datetime',
      'amount',
      'bank',
      'account_no',
      'account_name',
    ])
    assert.equal(data.platform_order_id[3], 'W')
    assert.lengthOf(data.platform_order_id, 24)
    assert.equal(data.bank, 'KBANK')
    assert.equal(data.account_no, '1234567890')
    assert.equal(data.account_name, 'Somchai Jaidee')
    assert.include(response.text, '"amount":100.00')
    // fee = 5.00 flat + 1 % of 100.00 = 6.00
    assert.deepEqual(await balance(who), { balance: 894, freeze_balance: 106, unsettle_balance: 0 })
    const order = await PayoutOrder.findByOrFail('platform_order_id', data.platform_order_id)
    assert.equal(order.fee, 6_00)
    assert.equal(order.holdState, 'held')
  })

  test('queues its dispatch now, and no job for its hold (the hold sweep releases it)', async ({
    assert,
  }) => {
    await queue('payouts').obliterate({ force: true })
    const who = await createPayoutMerchant(1000_00)
    const response = await withdraw(who)
    assert.equal(response.status, 200, response.text)
    const order = await PayoutOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    const dispatchJob = await queue('payouts').getJob(`payout-dispatch-${order.platformOrderId}`)
    assert.equal(dispatchJob?.name, 'payout.dispatch')
    assert.deepEqual(dispatchJob?.data, { payoutOrderId: order.id })
    assert.equal(await dispatchJob?.getState(), 'waiting')
    // One job per withdrawal, none delayed: a hold is released by the sweep.
    assert.deepEqual(await queue('payouts').getJobCounts('waiting', 'delayed'), {
      waiting: 1,
      delayed: 0,
    })
    assert.isUndefined(await queue('payouts').getJob(`payout-hold-${order.platformOrderId}`))
  })

  test('the hold sweep releases every overdue hold once, even run twice at once, and no other', async ({
    assert,
  }) => {
    await queue('payouts').obliterate({ force: true })
    const who = await createPayoutMerchant(1000_00)
    const ids: number[] = []
    for (let n = 0; n < 6; n++) {
      const response = await withdraw(who, { merchant_order_id: `H${n}`, amount: '100.00' })
      assert.equal(response.status, 200, response.text)
      ids.push(
        (await PayoutOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id))
          .id
      )
    }
    // Four are past their hold (batches of 3: the sweep goes on after a full one); two are not.
    const overdue = ids.slice(0, 4)
    await PayoutOrder.query()
      .whereIn('id', overdue)
      .update({ hold_expires_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    const [first, second] = await Promise.all([
      releaseOverdueHolds(DateTime.utc(), 3),
      releaseOverdueHolds(DateTime.utc(), 3),
    ])
    assert.equal(first + second, 4)
    const states = await PayoutOrder.query().whereIn('id', ids).orderBy('id')
    assert.deepEqual(
      states.map((order) => order.holdState),
      ['released', 'released', 'released', 'released', 'held', 'held']
    )
    assert.deepEqual(await balance(who), { balance: 800, freeze_balance: 200, unsettle_balance: 0 })
    assert.equal(await releaseOverdueHolds(), 0)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a database recreated with the same order ids still gets its payout jobs queued', async ({
    assert,
  }) => {
    // The jobs of a database that is gone stay in Redis (completed ones are kept
    // for inspection); the new orders reuse their auto-increment ids.
    await queue('payouts').obliterate({ force: true })
    const before = await withdraw(await createPayoutMerchant(1000_00))
    const old = await PayoutOrder.findByOrFail(
      'platform_order_id',
      before.json.data.platform_order_id
    )
    await resetDatabase()

    const response = await withdraw(await createPayoutMerchant(1000_00))
    assert.equal(response.status, 200, response.text)
    const order = await PayoutOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    assert.equal(order.id, old.id, 'the id is handed out again')
    const job = await queue('payouts').getJob(`payout-dispatch-${order.platformOrderId}`)
    assert.isDefined(job, 'payout-dispatch queued for the new order')
    assert.deepEqual(job?.data, { payoutOrderId: order.id })
    // Two orders, two jobs: the new one was not dropped as a duplicate.
    assert.deepEqual(await queue('payouts').getJobCounts('waiting', 'delayed'), {
      waiting: 2,
      delayed: 0,
    })
  })

  test('the spec balance table: create, then success or failure', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00, { withdrawFeeFlat: 10_00 })
    const ok = await withdraw(who, { merchant_order_id: 'A1', amount: '200.00' })
    const ko = await withdraw(who, { merchant_order_id: 'A2', amount: '300.00' })
    // after create: balance decreased by amount + fee, freeze increased by the same
    assert.deepEqual(await balance(who), { balance: 480, freeze_balance: 520, unsettle_balance: 0 })

    const okOrder = await PayoutOrder.findByOrFail(
      'platform_order_id',
      ok.json.data.platform_order_id
    )
    await PayoutOrder.query().where('id', okOrder.id).update({ status: 'pending' })
    await completePayout(okOrder.id, { success: true })
    // success: balance unchanged, hold removed
    assert.deepEqual(await balance(who), { balance: 480, freeze_balance: 310, unsettle_balance: 0 })

    const koOrder = await PayoutOrder.findByOrFail(
      'platform_order_id',
      ko.json.data.platform_order_id
    )
    await PayoutOrder.query().where('id', koOrder.id).update({ status: 'pending' })
    await completePayout(koOrder.id, { success: false, reason: 'account_closed' })
    // failure: restored, hold removed
    assert.deepEqual(await balance(who), { balance: 790, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('400 invalid-inputs: fields, amount range, insufficient balance (nothing held)', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(100_00, {
      withdrawMin: 50_00,
      withdrawMax: 90_00,
      withdrawFeeFlat: 5_00,
    })
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ merchant_order_id: 'A-1' }, /merchant_order_id/],
      [{ amount: '49.99' }, /amount must be at least 50.00/],
      [{ amount: '90.01' }, /amount must be at most 90.00/],
      [{ amount: 'x' }, /amount must be a number/],
      [{ amount: '50.001' }, /at most 2 decimals/],
      [{ account_no: '12345' }, /account_no must have 10 to 15 digits/],
      [{ account_name: '' }, /account_name/],
      [{ notify_url: 'http://x.test/cb' }, /notify_url must be a well-formed HTTPS URL/],
    ]
    for (const [fields, message] of cases) {
      assertError(
        assert,
        await withdraw(who, { ...fields, amount: fields.amount ?? '60.00' }),
        400,
        'invalid-inputs',
        message
      )
    }
    // 90.00 + 5.00 fee exceeds... no: 95.00 fits 100.00; two of them do not.
    assert.equal((await withdraw(who, { merchant_order_id: 'B1', amount: '90.00' })).status, 200)
    const short = await withdraw(who, { merchant_order_id: 'B2', amount: '60.00' })
    assertError(assert, short, 400, 'invalid-inputs', /insufficient balance: amount \+ fee = 65.00/)
    assert.deepEqual(await balance(who), { balance: 5, freeze_balance: 95, unsettle_balance: 0 })
    assert.equal(await payoutCount(), 1)
  })

  test('a merchant ledger account that is missing refuses the withdrawal; nothing is written', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const ledgerRows = async () =>
      Number((await db.from('ledger_transactions').count('* as total').first()).total)
    const before = await ledgerRows()
    // A hand edit: the merchant's frozen account (no entry uses it yet) is gone.
    await db
      .from('ledger_accounts')
      .where('owner', String(who.merchant.id))
      .where('code', 'frozen')
      .delete()
    const response = await withdraw(who)
    assert.equal(response.status, 500, response.text)
    assert.equal(await payoutCount(), 0)
    assert.equal(await ledgerRows(), before)
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('default minimum 20.00; unknown bank 422', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00)
    assertError(
      assert,
      await withdraw(who, { amount: '19.99' }),
      400,
      'invalid-inputs',
      /at least 20.00/
    )
    assertError(
      assert,
      await withdraw(who, { bank: 'ABC' }),
      422,
      'invalid-inputs',
      /^invalid bank code$/
    )
  })

  test('403 permission-denied when withdrawals are disabled; 404 without payout route', async ({
    assert,
  }) => {
    const disabled = await createPayoutMerchant(1000_00, { withdrawEnabled: false })
    assertError(assert, await withdraw(disabled), 403, 'permission-denied')
    const unrouted = await createTestMerchant()
    assertError(assert, await withdraw(unrouted), 404, 'not-found', /partner configuration missing/)
    assert.equal(await payoutCount(), 0)
  })

  test('409 duplicate-entry: same bank + account_no + amount within 3 minutes, when enabled', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { withdrawDuplicateCheck: true })
    assert.equal((await withdraw(who, { merchant_order_id: 'D1' })).status, 200)
    assertError(assert, await withdraw(who, { merchant_order_id: 'D2' }), 409, 'duplicate-entry')
    // Another amount, account or bank is not a duplicate.
    assert.equal((await withdraw(who, { merchant_order_id: 'D3', amount: '100.01' })).status, 200)
    assert.equal(
      (await withdraw(who, { merchant_order_id: 'D4', account_no: '1234567891' })).status,
      200
    )
    assert.equal((await withdraw(who, { merchant_order_id: 'D5', bank: 'SCB' })).status, 200)
    // After 3 minutes it is allowed again (the rule's record ages with the orders).
    const past = DateTime.utc().minus({ minutes: 3, seconds: 1 }).toJSDate()
    await db.from('payout_orders').update({ created_at: past })
    await db.from('payout_duplicate_guards').update({ last_withdrawal_at: past })
    assert.equal((await withdraw(who, { merchant_order_id: 'D6' })).status, 200)

    const lenient = await createPayoutMerchant(1000_00)
    assert.equal((await withdraw(lenient, { merchant_order_id: 'E1' })).status, 200)
    assert.equal((await withdraw(lenient, { merchant_order_id: 'E2' })).status, 200)
    // Switched on, the check sees the withdrawals made just before, while it was off.
    await db
      .from('merchants')
      .where('id', lenient.merchant.id)
      .update({ withdraw_duplicate_check: true })
    await merchantAuthChanged(undefined, lenient.merchantId)
    assertError(
      assert,
      await withdraw(lenient, { merchant_order_id: 'E3' }),
      409,
      'duplicate-entry'
    )
  })
})

test.group('withdraw query', (group) => {
  group.each.setup(() => resetDatabase())

  test("open, then success with done_datetime; 400 for bad ids; 404 for others' orders", async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const other = await createPayoutMerchant(1000_00)
    const id = (await withdraw(who)).json.data.platform_order_id
    const query = (as: TestMerchant, value: unknown) =>
      signedPost(
        '/withdraw/query',
        as,
        authBody(as, value === undefined ? {} : { platform_order_id: value })
      )

    const open = await query(who, id)
    assert.equal(open.status, 200, open.text)
    assert.deepEqual(Object.keys(open.json.data), [
      'platform_order_id',
      'merchant_order_id',
      'order_datetime',
      'bank',
      'account_no',
      'account_name',
      'amount',
      'status',
      'done_datetime',
    ])
    assert.equal(open.json.data.status, 'open')
    assert.isNull(open.json.data.done_datetime)

    const order = await PayoutOrder.findByOrFail('platform_order_id', id)
    for (const status of ['new', 'queue', 'pending'] as const) {
      await PayoutOrder.query().where('id', order.id).update({ status })
      assert.equal((await query(who, id)).json.data.status, 'open')
    }
    await completePayout(order.id, { success: true })
    const done = await query(who, id)
    assert.equal(done.json.data.status, 'success')
    assert.match(done.json.data.done_datetime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)

    for (const status of ['failed', 'error', 'cancelled', 'rejected'] as const) {
      await PayoutOrder.query().where('id', order.id).update({ status })
      assert.equal((await query(who, id)).json.data.status, 'failed')
    }

    for (const value of [undefined, '', 'x', withMarker(id, 'P'), withMarker(id, 'M')]) {
      assertError(assert, await query(who, value), 400, 'invalid-inputs')
    }
    assertError(assert, await query(other, id), 404, 'not-found')
  })
})
