import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

const ORDER = {
  merchant_order_id: 'Q1',
  amount: '250.50',
  bank: 'KTB',
  account_name: 'Customer',
  account_no: '1234567890',
}

async function createOrder(who: TestMerchant, path: string, id: string) {
  const response = await signedPost(path, who, authBody(who, { ...ORDER, merchant_order_id: id }))
  return response.json.data.platform_order_id as string
}

function query(who: TestMerchant, platformOrderId: unknown) {
  const fields = platformOrderId === undefined ? {} : { platform_order_id: platformOrderId }
  return signedPost('/payment/query', who, authBody(who, fields))
}

test.group('POST /payment/query', (group) => {
  group.each.setup(() => resetDatabase())

  test('answers for orders of all three create endpoints', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'transfer' })
    const ids = [
      await createOrder(who, '/payment/create', 'Q1'),
      await createOrder(who, '/payment/create-transfer', 'Q2'),
      await createOrder(who, '/payment/create-flex', 'Q3'),
    ]
    for (const [index, id] of ids.entries()) {
      const response = await query(who, id)
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(Object.keys(response.json.data), [
        'platform_order_id',
        'merchant_order_id',
        'order_datetime',
        'amount',
        'status',
        'expire_datetime',
        'payment_datetime',
      ])
      assert.equal(response.json.data.platform_order_id, id)
      assert.equal(response.json.data.merchant_order_id, `Q${index + 1}`)
      assert.equal(response.json.data.status, 'open')
      assert.isNull(response.json.data.payment_datetime)
      assert.include(response.text, '"amount":250.50')
      assert.notProperty(response.json.data, 'qrcode')
      assert.notProperty(response.json.data, 'payment_type')
    }
  })

  test('status and payment_datetime follow the order', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const id = await createOrder(who, '/payment/create', 'Q1')
    const paidAt = DateTime.fromISO('2026-03-01T03:04:05Z')
    await PaymentOrder.query()
      .where('platform_order_id', id)
      .update({ status: 'unsettled_paid', paid_at: paidAt.toJSDate() })
    const response = await query(who, id)
    assert.equal(response.json.data.status, 'unsettled_paid')
    assert.equal(response.json.data.payment_datetime, '2026-03-01 10:04:05')
  })

  test('400 invalid-inputs for a missing, malformed or non-payment id', async ({ assert }) => {
    const who = await createDepositMerchant()
    const id = 'ABCP20260301ABCDEFGHIJKL'
    for (const value of [
      undefined,
      '',
      42,
      'short',
      id.toLowerCase(),
      id + 'X',
      'ABCW20260301ABCDEFGHIJKL',
      'ABCM20260301ABCDEFGHIJKL',
      'PABC20260301ABCDEFGHIJKL',
    ]) {
      const response = await query(who, value)
      assert.equal(response.status, 400, `${String(value)}: ${response.text}`)
      assert.equal(response.json.error, 'invalid-inputs')
    }
  })

  test("404 not-found for an unknown order and for another merchant's order", async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const other = await createDepositMerchant()
    await createDepositAccount()
    const id = await createOrder(other, '/payment/create', 'Q1')
    for (const value of [id, 'ABCP20260301ABCDEFGHIJKL']) {
      const response = await query(who, value)
      assert.equal(response.status, 404, response.text)
      assert.equal(response.json.error, 'not-found')
    }
    assert.equal((await query(other, id)).status, 200)
  })
})
