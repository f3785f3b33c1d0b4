import { test } from '@japa/runner'
import { assertError } from '#tests/helpers/envelope'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import { verifyDepositUsage } from '#payments/deposit_usage_counters'
import { describePromptPay } from '#payments/promptpay_qr'
import { chooseSlotStatement, chosenSlot, heldAmounts, SLOT_WINDOW } from '#payments/deposit_slots'
import { batchTransaction, COMMIT } from '#core/sql_batch'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
  updatePlatforms,
} from '#tests/helpers/merchants'

const ORDER = {
  merchant_order_id: 'ORDER1001',
  amount: '100.00',
  bank: 'SCB',
  account_name: 'Somchai Jaidee',
  account_no: '123-4-56789-0',
  notify_url: 'https://merchant.example.test/callback',
}

function create(who: TestMerchant, fields: Record<string, unknown> = {}, path = '/payment/create') {
  return signedPost(path, who, authBody(who, { ...ORDER, ...fields }))
}

async function orderCount() {
  return Number((await db.from('payment_orders').count('* as total').first()).total)
}

/** The transfer_amount a /payment/create-transfer of 100.00 is given. */
function transferAmount(who: TestMerchant, id: string) {
  return create(who, { merchant_order_id: id }, '/payment/create-transfer').then(
    (response) => response.json.data.transfer_amount
  )
}

test.group('payment create: success shapes', (group) => {
  group.each.setup(() => resetDatabase())

  test('QR: spec fields in order, EMV PromptPay payload for transfer_amount', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
    const before = DateTime.now().setZone('Asia/Bangkok')
    const response = await create(who)
    assert.equal(response.status, 200, response.text)
    const data = response.json.data
    assert.deepEqual(Object.keys(data), [
      'platform_order_id',
      'merchant_order_id',
      'uuid',
      'order_datetime',
      'expire_datetime',
      'amount',
      'transfer_amount',
      'payment_type',
      'qrcode',
      'payment_url',
    ])
    assert.lengthOf(data.platform_order_id, 24)
    assert.equal(data.platform_order_id.slice(0, 3), who.merchant.orderPrefix)
    assert.equal(data.platform_order_id[3], 'P')
    assert.equal(data.platform_order_id.slice(4, 12), before.toFormat('yyyyLLdd'))
    assert.match(data.platform_order_id.slice(12), /^[A-Z0-9]{12}$/)
    assert.match(data.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.match(data.order_datetime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    const orderAt = DateTime.fromFormat(data.order_datetime, 'yyyy-LL-dd HH:mm:ss', {
      zone: 'Asia/Bangkok',
    })
    const expireAt = DateTime.fromFormat(data.expire_datetime, 'yyyy-LL-dd HH:mm:ss', {
      zone: 'Asia/Bangkok',
    })
    assert.closeTo(orderAt.toMillis(), Date.now(), 5000)
    assert.equal(expireAt.diff(orderAt, 'seconds').seconds, who.merchant.orderTtlSeconds)
    assert.include(response.text, '"amount":100.00,"transfer_amount":100.00,')
    assert.equal(data.payment_type, 'QR')
    assert.equal(data.payment_url, `https://pay.example.test/pay/${data.uuid}`)
    const qr = describePromptPay(data.qrcode)
    assert.isTrue(qr.crcValid)
    assert.equal(qr.type, 'promptpay')
    assert.isTrue(qr.dynamic)
    assert.equal(qr.amountSatang, 10000)
  })

  test('TRANSFER: destination account, no QR', async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({
      channel: 'transfer',
      bank: 'BBL',
      accountName: 'Gateway Co',
    })
    const response = await create(who, {}, '/payment/create-transfer')
    assert.equal(response.status, 200, response.text)
    const data = response.json.data
    assert.deepEqual(Object.keys(data), [
      'platform_order_id',
      'merchant_order_id',
      'uuid',
      'order_datetime',
      'expire_datetime',
      'amount',
      'transfer_amount',
      'payment_type',
      'qrcode',
      'deposit_bank',
      'deposit_account_no',
      'deposit_account_name',
      'payment_url',
    ])
    assert.equal(data.payment_type, 'TRANSFER')
    assert.isNull(data.qrcode)
    assert.equal(data.deposit_bank, 'BBL')
    assert.equal(data.deposit_account_no, account.accountNo)
    assert.equal(data.deposit_account_name, 'Gateway Co')
  })

  test('FLEX: no channel details in the answer, payment_url always present', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' })
    const response = await create(who, {}, '/payment/create-flex')
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(Object.keys(response.json.data), [
      'platform_order_id',
      'merchant_order_id',
      'uuid',
      'order_datetime',
      'expire_datetime',
      'amount',
      'payment_type',
      'payment_url',
    ])
    assert.equal(response.json.data.payment_type, 'FLEX')
    assert.match(response.json.data.payment_url, /^https:\/\/pay\.example\.test\/pay\//)
  })

  test('payment_url is null for QR and TRANSFER without a payment page domain', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await updatePlatforms({ paymentPageDomain: null })
    await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'transfer' })
    assert.isNull((await create(who, { merchant_order_id: 'A1' })).json.data.payment_url)
    assert.isNull(
      (await create(who, { merchant_order_id: 'A2' }, '/payment/create-transfer')).json.data
        .payment_url
    )
  })

  test('a biller account gets a bill-payment QR with a per-order ref1 and no amount adjustment', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr', promptpayId: null, billerId: '010555012345678' })
    const first = await create(who, { merchant_order_id: 'B1' })
    const second = await create(who, { merchant_order_id: 'B2' })
    for (const response of [first, second]) {
      assert.equal(response.status, 200, response.text)
      const qr = describePromptPay(response.json.data.qrcode)
      assert.equal(qr.type, 'billpayment')
      assert.equal(qr.billerId, '010555012345678')
      assert.equal(qr.amountSatang, 10000)
      const order = await PaymentOrder.findByOrFail(
        'platform_order_id',
        response.json.data.platform_order_id
      )
      assert.equal(qr.ref1, order.paymentReference)
    }
    assert.equal(first.json.data.transfer_amount, 100)
    assert.equal(second.json.data.transfer_amount, 100)
    assert.notEqual(
      describePromptPay(first.json.data.qrcode).ref1,
      describePromptPay(second.json.data.qrcode).ref1
    )
  })

  test('an account changed behind the pool cache: the order is built from the row, not the copy', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({
      channel: 'qr',
      promptpayId: '0812345678',
      dailyCountLimit: 5,
    })
    const first = await create(who, { merchant_order_id: 'STALE1' })
    assert.equal(first.status, 200, first.text)
    // Changed without the model's hooks: this process's cached pool keeps the
    // old copy (another process's change not yet announced looks the same).
    await db
      .from('deposit_accounts')
      .where('id', account.id)
      .update({ promptpay_id: '0899999999', daily_count_limit: 1 })
    const refused = await create(who, { merchant_order_id: 'STALE2' })
    assertError(assert, refused, 429, 'channel-limit-reached')
    await db.from('deposit_accounts').where('id', account.id).update({ daily_count_limit: null })
    const second = await create(who, { merchant_order_id: 'STALE3', amount: '101.00' })
    assert.equal(second.status, 200, second.text)
    assert.equal(describePromptPay(second.json.data.qrcode).proxy, '0066899999999')
    assert.equal(await orderCount(), 2)
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })

  test('a limit raised behind the pool cache: the row, not the copy, judges the order', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', dailyAmountLimit: 50_00 })
    const refused = await create(who, { merchant_order_id: 'RAISED1' })
    assertError(assert, refused, 429, 'channel-limit-reached')
    await db.from('deposit_accounts').where('id', account.id).update({ daily_amount_limit: null })
    const accepted = await create(who, { merchant_order_id: 'RAISED2' })
    assert.equal(accepted.status, 200, accepted.text)
  })

  test('the same amount gets the next free satang on the same account', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const amounts = []
    for (const id of ['S1', 'S2', 'S3']) {
      amounts.push((await create(who, { merchant_order_id: id })).json.data.transfer_amount)
    }
    assert.deepEqual(amounts, [100, 100.01, 100.02])
  })

  test('a busy transfer account chooses its amount in the create itself: a freed one above, then the first gap', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const transfer = (id: string) => transferAmount(who, id)
    assert.deepEqual(
      [await transfer('T1'), await transfer('T2'), await transfer('T3')],
      [100, 100.01, 100.02]
    )
    // The account's amounts are often held: the next creates offer the
    // amounts above too (chooseSlotStatement) instead of the plain take.
    for (let k = 0; k < 20; k++) heldAmounts.record(account.id, true)
    assert.isTrue(heldAmounts.searchFirst(account.id))
    // 100.01 released (its order paid or expired): the next create takes it,
    // then the first amount above the range's rows.
    await db
      .from('deposit_slots')
      .where({ deposit_account_id: account.id, slot_amount: 100_01 })
      .update({ held: false })
    await db
      .from('payment_orders')
      .where({ deposit_account_id: account.id, slot_amount: 100_01 })
      .update({ slot_amount: null, status: 'error', error_reason: 'expired' })
    assert.deepEqual([await transfer('T4'), await transfer('T5')], [100.01, 100.03])
    const held = await db
      .from('deposit_slots')
      .where({ deposit_account_id: account.id, held: true })
      .orderBy('slot_amount')
      .select('slot_amount')
    assert.deepEqual(
      held.map((row) => Number(row.slot_amount)),
      [100_00, 100_01, 100_02, 100_03]
    )
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
    // The window's LAST_INSERT_ID does not leak into the order's event,
    // which names the order by the id its INSERT made.
    const orders = await db
      .from('payment_orders')
      .whereIn('merchant_order_id', ['T4', 'T5'])
      .select('id', 'transfer_amount')
    assert.lengthOf(orders, 2)
    for (const order of orders) {
      const events = await db
        .from('order_events')
        .where({ order_type: 'payment', order_id: order.id, to_status: 'open' })
      assert.lengthOf(events, 1, `order ${order.id} has its created event`)
    }
    const stray = await db
      .from('order_events')
      .whereNotIn('order_id', db.from('payment_orders').select('id'))
      .where('order_type', 'payment')
    assert.lengthOf(stray, 0)
  })

  test('a busy account whose next eight amounts are all held takes the ninth from the locked row', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const transfer = (id: string) => transferAmount(who, id)
    const first = []
    for (let k = 1; k <= 8; k++) first.push(await transfer(`W${k}`))
    assert.deepEqual(first, [100, 100.01, 100.02, 100.03, 100.04, 100.05, 100.06, 100.07])
    for (let k = 0; k < 20; k++) heldAmounts.record(account.id, true)
    // 100.00 … 100.07 held: the batch chooses nothing, the order's insert
    // refuses it, and the attempt goes on from the locked account row.
    assert.equal(await transfer('W9'), 100.08)
    assert.isTrue(heldAmounts.searchFirst(account.id))
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })

  test('a busy account offers as far as its recent creates went above the amount, and one more', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const transfer = (id: string) => transferAmount(who, id)
    // Nothing known yet: the whole window.
    assert.equal(heldAmounts.windowWidth(account.id), SLOT_WINDOW)
    // The plain take, then twice the locked-row path: 100.00 held, then 100.01.
    assert.deepEqual(
      [await transfer('R1'), await transfer('R2'), await transfer('R3')],
      [100, 100.01, 100.02]
    )
    assert.equal(heldAmounts.windowWidth(account.id), 4)
    for (let k = 0; k < 20; k++) heldAmounts.record(account.id, true)
    // The window of four offers 100.00 … 100.03 and takes the last; then five.
    assert.equal(await transfer('R4'), 100.03)
    assert.equal(heldAmounts.windowWidth(account.id), 5)
    assert.equal(await transfer('R5'), 100.04)
    assert.equal(heldAmounts.windowWidth(account.id), 6)
    // Many creates that found their amount close by: the window shrinks to two.
    for (let k = 0; k < 300; k++) heldAmounts.record(account.id, true, 0)
    assert.equal(heldAmounts.windowWidth(account.id), 2)
    // Too short for 100.00 … 100.04 held: the locked row takes 100.05, and
    // the window widens to reach that far again.
    assert.equal(await transfer('R6'), 100.05)
    assert.equal(heldAmounts.windowWidth(account.id), 7)
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })

  test('chooseSlotStatement: the amount, a free row above, the first amount without a row, and nothing when all are held', async ({
    assert,
  }) => {
    const account = await createDepositAccount({ channel: 'transfer', maxAdjustment: 3 })
    await db.table('deposit_slots').multiInsert([
      { deposit_account_id: account.id, slot_amount: 500_00, held: true },
      { deposit_account_id: account.id, slot_amount: 500_01, held: true },
      { deposit_account_id: account.id, slot_amount: 500_02, held: false },
    ])
    const choose = (amount: number) =>
      batchTransaction(async (trx) => {
        const results = await trx.run([chooseSlotStatement(account, amount), COMMIT])
        return chosenSlot(results[0])
      })
    assert.equal(await choose(600_00), 600_00) // no row yet: the amount itself
    assert.equal(await choose(500_00), 500_02) // held: the free row above
    assert.equal(await choose(500_00), 500_03) // then the first amount without a row
    // Every amount of the range held: nothing chosen, and the order's insert refuses it.
    assert.isNull(await choose(500_00))
    const held = await db
      .from('deposit_slots')
      .where({ deposit_account_id: account.id, held: true })
      .orderBy('slot_amount')
      .select('slot_amount')
    assert.deepEqual(
      held.map((row) => Number(row.slot_amount)),
      [500_00, 500_01, 500_02, 500_03, 600_00]
    )
  })

  test('a slot row that says free while an order holds its amount is repaired, not reused', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const first = (await create(who, { merchant_order_id: 'H1' })).json.data
    // A hand edit: the order keeps 100.00, its slot row says free.
    await db.from('deposit_slots').where('slot_amount', 100_00).update({ held: false })
    const second = await create(who, { merchant_order_id: 'H2' })
    assert.equal(second.status, 200, second.text)
    assert.equal(first.transfer_amount, 100)
    assert.equal(second.json.data.transfer_amount, 100.01)
    const slot = await db.from('deposit_slots').where('slot_amount', 100_00).first()
    assert.equal(Number(slot.held), 1)
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })

  test('customer account_no is stored without separators', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const response = await create(who)
    const order = await PaymentOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    assert.equal(order.customerAccountNo, '1234567890')
    assert.equal(order.customerBank, 'SCB')
  })
})

test.group('payment create: validation (400 / 422 invalid-inputs)', (group) => {
  group.each.setup(() => resetDatabase())

  test('each invalid field is named', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ merchant_order_id: undefined }, /merchant_order_id is required/],
      [{ merchant_order_id: 'ORDER-1' }, /merchant_order_id must be 1 to 40 letters or digits/],
      [{ merchant_order_id: 'A'.repeat(41) }, /merchant_order_id/],
      [{ merchant_order_id: 123 }, /merchant_order_id/],
      [{ amount: undefined }, /amount is required/],
      [{ amount: '19.99' }, /amount must be at least 20.00/],
      [{ amount: 19 }, /amount must be at least 20.00/],
      [{ amount: '20.001' }, /amount must be a number or a string with at most 2 decimals/],
      [{ amount: 'abc' }, /amount must be a number/],
      [{ amount: -50 }, /amount must be a number/],
      [{ bank: undefined }, /bank is required/],
      [{ account_name: undefined }, /account_name is required/],
      [{ account_name: '   ' }, /account_name/],
      [{ account_no: undefined }, /account_no is required/],
      [{ account_no: '123456789' }, /account_no must have 10 to 15 digits/],
      [{ account_no: '1234567890123456' }, /account_no must have 10 to 15 digits/],
      [
        { notify_url: 'http://merchant.example.test/cb' },
        /notify_url must be a well-formed HTTPS URL/,
      ],
      [{ notify_url: 'not a url' }, /notify_url must be a well-formed HTTPS URL/],
      [{ notify_url: 'https://user:pw@merchant.example.test/' }, /notify_url/],
    ]
    for (const [fields, message] of cases) {
      const body = { ...ORDER, ...fields }
      for (const key of Object.keys(fields))
        if (fields[key] === undefined) delete (body as any)[key]
      const response = await signedPost('/payment/create', who, authBody(who, body))
      assertError(assert, response, 400, 'invalid-inputs', message)
    }
    assert.equal(await orderCount(), 0)
  })

  test('several bad fields are reported together', async ({ assert }) => {
    const who = await createDepositMerchant()
    const response = await create(who, { amount: '1', account_no: '12', notify_url: 'ftp://x' })
    assertError(assert, response, 400, 'invalid-inputs')
    assert.include(response.json.message, 'amount')
    assert.include(response.json.message, 'account_no')
    assert.include(response.json.message, 'notify_url')
  })

  test('an unknown bank code is 422 "invalid bank code", on all three endpoints', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    for (const path of ['/payment/create', '/payment/create-transfer', '/payment/create-flex']) {
      for (const bank of ['XYZ', 'kbank', 'Kbank', 42]) {
        assertError(
          assert,
          await create(who, { bank }, path),
          422,
          'invalid-inputs',
          'invalid bank code'
        )
      }
    }
    assert.equal(await orderCount(), 0)
  })

  test('amount as a number, string, with one decimal, and notify_url omitted or null', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ merchant_order_id: 'N1', amount: 20 }, 20],
      [{ merchant_order_id: 'N2', amount: '20.5' }, 20.5],
      [{ merchant_order_id: 'N3', amount: 1234.56, notify_url: null }, 1234.56],
    ]
    for (const [fields, amount] of cases) {
      const response = await create(who, fields)
      assert.equal(response.status, 200, response.text)
      assert.equal(response.json.data.amount, amount)
    }
    const noUrl = authBody(who, { ...ORDER, merchant_order_id: 'N4', notify_url: undefined })
    assert.equal((await signedPost('/payment/create', who, noUrl)).status, 200)
  })
})

test.group('payment create: merchant and platform gates', (group) => {
  group.each.setup(() => resetDatabase())

  test('403 permission-denied when payments are disabled', async ({ assert }) => {
    const who = await createDepositMerchant({ paymentEnabled: false })
    await createDepositAccount()
    for (const path of ['/payment/create', '/payment/create-transfer', '/payment/create-flex']) {
      assertError(assert, await create(who, {}, path), 403, 'permission-denied')
    }
  })

  test('404 not-found when the merchant has no deposit group', async ({ assert }) => {
    const who = await createTestMerchant()
    await createDepositAccount()
    for (const path of ['/payment/create', '/payment/create-transfer', '/payment/create-flex']) {
      assertError(
        assert,
        await create(who, {}, path),
        404,
        'not-found',
        /partner configuration missing/
      )
    }
  })

  test('503 service-unavailable when no account of the group fits', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' }) // wrong channel for QR
    await createDepositAccount({ channel: 'qr', depositGroup: 'other-group' })
    await createDepositAccount({ channel: 'qr', active: false })
    await createDepositAccount({ channel: 'qr', maxAmount: 5000 }) // 100.00 is above its max
    await createDepositAccount({ channel: 'qr', minAmount: 50000 })
    assertError(assert, await create(who), 503, 'service-unavailable')
    assert.equal(await orderCount(), 0)
  })

  test('503 when every slot of the only account is taken', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr', maxAdjustment: 1 })
    assert.equal((await create(who, { merchant_order_id: 'T1' })).status, 200)
    assert.equal((await create(who, { merchant_order_id: 'T2' })).status, 200)
    assertError(assert, await create(who, { merchant_order_id: 'T3' }), 503, 'service-unavailable')
  })

  test('429 channel-limit-reached when every eligible channel hit a limit', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr', hourlyCountLimit: 1 })
    await createDepositAccount({ channel: 'qr', dailyAmountLimit: 15000 })
    assert.equal((await create(who, { merchant_order_id: 'L1' })).status, 200)
    assert.equal((await create(who, { merchant_order_id: 'L2' })).status, 200)
    assertError(
      assert,
      await create(who, { merchant_order_id: 'L3' }),
      429,
      'channel-limit-reached'
    )
    // A fresh account in the group takes the next order.
    await createDepositAccount({ channel: 'qr', dailyCountLimit: 1 })
    assert.equal((await create(who, { merchant_order_id: 'L4' })).status, 200)
    assertError(
      assert,
      await create(who, { merchant_order_id: 'L5' }),
      429,
      'channel-limit-reached'
    )
  })

  test('limits count and amount per hour and per day', async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer', hourlyAmountLimit: 25000 })
    assert.equal(
      (await create(who, { merchant_order_id: 'H1' }, '/payment/create-transfer')).status,
      200
    )
    assert.equal(
      (await create(who, { merchant_order_id: 'H2' }, '/payment/create-transfer')).status,
      200
    )
    const third = await create(who, { merchant_order_id: 'H3' }, '/payment/create-transfer')
    assertError(assert, third, 429, 'channel-limit-reached')
    // Orders from before this hour do not count towards the hourly limit.
    await db
      .from('payment_orders')
      .update({ created_at: DateTime.utc().minus({ hours: 2 }).toJSDate() })
    // The limit counters follow the orders, as deposit-usage:verify --fix recounts them.
    await verifyDepositUsage({ fix: true })
    const nextHour = await create(who, { merchant_order_id: 'H4' }, '/payment/create-transfer')
    const sameDay = DateTime.utc().setZone('Asia/Bangkok').hour >= 2
    if (sameDay) assert.equal(nextHour.status, 200, nextHour.text)
    account.dailyCountLimit = 3
    await account.save()
    if (sameDay) {
      assertError(
        assert,
        await create(who, { merchant_order_id: 'H5' }, '/payment/create-transfer'),
        429,
        'channel-limit-reached'
      )
    }
  })

  test('killswitch and open period: 503 with data.code, on every create endpoint', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await updatePlatforms({ depositEnabled: false })
    for (const path of ['/payment/create-flex', '/payment/create', '/payment/create-transfer']) {
      const response = await create(who, {}, path)
      assertError(assert, response, 503, 'service-unavailable')
      assert.deepEqual(response.json.data, { code: 'killswitch_off' })
    }
    const now = DateTime.utc().setZone('Asia/Bangkok')
    const from = now.plus({ hours: 1 }).toFormat('HH:mm')
    const to = now.plus({ hours: 2 }).toFormat('HH:mm')
    await updatePlatforms({
      depositEnabled: true,
      depositOpenFrom: from,
      depositOpenTo: to,
    })
    const closed = await create(who, {}, '/payment/create-flex')
    assertError(assert, closed, 503, 'service-unavailable')
    assert.deepEqual(closed.json.data, { code: 'outside_open_period' })
    await updatePlatforms({
      depositOpenFrom: now.minus({ hours: 1 }).toFormat('HH:mm'),
      depositOpenTo: now.plus({ hours: 1 }).toFormat('HH:mm'),
    })
    assert.equal((await create(who, {}, '/payment/create-flex')).status, 200)
    assert.equal(await orderCount(), 1)
  })

  test('flex without payment_page_domain: 400 before any order exists', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await updatePlatforms({ paymentPageDomain: null })
    assertError(
      assert,
      await create(who, {}, '/payment/create-flex'),
      400,
      'invalid-inputs',
      /payment_page_domain/
    )
    assert.equal(await orderCount(), 0)
    // The same merchant_order_id is still free.
    await updatePlatforms({ paymentPageDomain: 'pay.example.test' })
    assert.equal((await create(who, {}, '/payment/create-flex')).status, 200)
  })

  test('flex drops an external channel whose call fails and tries the next', async ({ assert }) => {
    const who = await createDepositMerchant()
    const failing = await createDepositAccount({
      channel: 'external',
      priority: 10,
      providerConfig: { fail: true },
    })
    const working = await createDepositAccount({ channel: 'external', priority: 5 })
    const response = await create(who, {}, '/payment/create-flex')
    assert.equal(response.status, 200, response.text)
    const order = await PaymentOrder.findByOrFail(
      'platform_order_id',
      response.json.data.platform_order_id
    )
    assert.equal(order.depositAccountId, working.id)
    assert.notEqual(order.depositAccountId, failing.id)
    assert.match(order.externalUrl!, /^\/sandbox\/provider\/SBX/)

    await working.merge({ providerConfig: { fail: true } }).save()
    assertError(
      assert,
      await create(who, { merchant_order_id: 'X2' }, '/payment/create-flex'),
      503,
      'service-unavailable'
    )
    assert.equal(await orderCount(), 1)
  })

  test('QR and TRANSFER never use an external channel; flex may use any kind', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'external' })
    assertError(assert, await create(who, { merchant_order_id: 'E1' }), 503, 'service-unavailable')
    assertError(
      assert,
      await create(who, { merchant_order_id: 'E2' }, '/payment/create-transfer'),
      503,
      'service-unavailable'
    )
    assert.equal(
      (await create(who, { merchant_order_id: 'E3' }, '/payment/create-flex')).status,
      200
    )
  })
})

test.group('payment create: merchant_order_id uniqueness', (group) => {
  group.each.setup(() => resetDatabase())

  test('409 duplicate-entry within 7 days, across the three endpoints', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'transfer' })
    assert.equal((await create(who)).status, 200)
    for (const path of ['/payment/create', '/payment/create-transfer', '/payment/create-flex']) {
      assertError(assert, await create(who, {}, path), 409, 'duplicate-entry', /ORDER1001/)
    }
    // Another merchant may use the same merchant_order_id.
    const other = await createDepositMerchant()
    assert.equal((await create(other)).status, 200)
  })

  test('after 7 days the merchant_order_id may be used again', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    assert.equal((await create(who)).status, 200)
    await db
      .from('merchant_order_ids')
      .update({ reserved_at: DateTime.utc().minus({ days: 7, minutes: 1 }).toJSDate() })
    assert.equal((await create(who)).status, 200)
    assertError(assert, await create(who), 409, 'duplicate-entry')
  })

  test('identical creates at once produce one order and 409 for the rest', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'qr' })
    const responses = await Promise.all(Array.from({ length: 12 }, () => create(who)))
    const statuses = responses.map((response) => response.status).sort()
    assert.deepEqual(
      statuses,
      [200, ...Array(11).fill(409)],
      responses.map((r) => r.text).join('\n')
    )
    assert.equal(await orderCount(), 1)
  })

  test('a create refused for limits leaves merchant_order_id free', async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', dailyCountLimit: 0 })
    assertError(assert, await create(who), 429, 'channel-limit-reached')
    await account.merge({ dailyCountLimit: null }).save()
    assert.equal((await create(who)).status, 200)
  })
})
