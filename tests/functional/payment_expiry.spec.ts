import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { Worker } from 'bullmq'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import { expirePayment, sweepExpiredPayments } from '#payments/actions/expire_payment'
import { bullConnection, queue, queuePrefix } from '#core/queue/queue_manager'
import { HANDLERS } from '#jobs/handlers'
import { registerSchedules } from '#core/queue/schedules'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

async function createOrder(who: TestMerchant, id: string, notifyUrl?: string) {
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: id,
      amount: '100.00',
      bank: 'KTB',
      account_name: 'Customer',
      account_no: '1234567890',
      ...(notifyUrl ? { notify_url: notifyUrl } : {}),
    })
  )
  return PaymentOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}

async function until(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

test.group('payment expiry', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await queue('payments').obliterate({ force: true })
  })

  test('the scheduled sweep of a worker expires an open order after expire_datetime: error, slot released, one FAIL callback row', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ orderTtlSeconds: 1 })
    await createDepositAccount()
    const order = await createOrder(who, 'EXP1', 'https://merchant.example.test/cb')
    assert.equal(order.slotAmount, 10000)
    assert.lengthOf(await queue('payments').getJobs(), 0, 'no job per order')

    // As a worker starts: the schedules of its queues, then a BullMQ worker on them.
    await registerSchedules(['payments'])
    const connection = bullConnection()
    const worker = new Worker('payments', async (job) => (await HANDLERS[job.name]())(job), {
      connection,
      prefix: queuePrefix,
    })
    try {
      const expired = await until(async () => (await order.refresh()).status === 'error', 8000)
      assert.isTrue(expired, `order still ${order.status}`)
    } finally {
      await worker.close()
      // BullMQ does not close a connection it was handed.
      await connection.quit()
    }
    assert.equal(order.errorReason, 'expired')
    assert.isNull(order.slotAmount)

    const rows = await db.from('callback_outbox').where('order_id', order.id)
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].status, 'FAIL')
    assert.equal(rows[0].notify_url, 'https://merchant.example.test/cb')
    const body = JSON.parse(rows[0].body)
    assert.deepEqual(Object.keys(body), [
      'merchant_id',
      'platform_order_id',
      'merchant_order_id',
      'mode',
      'amount',
      'status',
      'timestamp',
    ])
    assert.equal(body.merchant_id, who.merchantId)
    assert.equal(body.platform_order_id, order.platformOrderId)
    assert.equal(body.mode, 'PAYMENT')
    assert.equal(body.status, 'FAIL')
    assert.include(rows[0].body, '"amount":100.00')
    assert.closeTo(body.timestamp, Date.now(), 10_000)

    // The query shows the final status.
    const response = await signedPost(
      '/payment/query',
      who,
      authBody(who, { platform_order_id: order.platformOrderId })
    )
    assert.equal(response.json.data.status, 'error')
  })

  test('expiring is idempotent and never touches a closed or not-yet-due order', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createOrder(who, 'EXP2', 'https://merchant.example.test/cb')
    assert.isFalse(await expirePayment(order.id), 'not due yet')

    const later = DateTime.utc().plus({ hours: 1 })
    assert.isTrue(await expirePayment(order.id, later))
    assert.isFalse(await expirePayment(order.id, later), 'second run changes nothing')
    const rows = await db.from('callback_outbox').where('order_id', order.id)
    assert.lengthOf(rows, 1)

    const paid = await createOrder(who, 'EXP3')
    await PaymentOrder.query().where('id', paid.id).update({ status: 'unsettled_paid' })
    assert.isFalse(await expirePayment(paid.id, later))
    assert.equal((await paid.refresh()).status, 'unsettled_paid')
  })

  test('an order awaiting slip review does not expire; no notify_url means no callback row', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const reviewed = await createOrder(who, 'EXP4')
    await PaymentOrder.query().where('id', reviewed.id).update({ awaiting_review: true })
    const plain = await createOrder(who, 'EXP5')
    const later = DateTime.utc().plus({ hours: 1 })
    assert.equal(await sweepExpiredPayments(later), 1)
    assert.equal((await reviewed.refresh()).status, 'open')
    assert.equal((await plain.refresh()).status, 'error')
    assert.lengthOf(await db.from('callback_outbox'), 0)
  })

  test('the sweep expires overdue orders and frees their transfer_amount', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const first = await createOrder(who, 'EXP6')
    await PaymentOrder.query()
      .where('id', first.id)
      .update({ expire_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    assert.equal(await sweepExpiredPayments(), 1)
    const second = await createOrder(who, 'EXP7')
    assert.equal(second.transferAmount, first.transferAmount, 'the released slot is reused')
  })

  test('two sweeps at once, in batches, expire each overdue order exactly once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const orders = []
    for (let index = 0; index < 12; index++) {
      orders.push(await createOrder(who, `EXPB${index}`, 'https://merchant.example.test/cb'))
    }
    const later = DateTime.utc().plus({ hours: 1 })
    // Batches of 5: three rounds each, racing for the same rows.
    const [first, second] = await Promise.all([
      sweepExpiredPayments(later, 5),
      sweepExpiredPayments(later, 5),
    ])
    assert.equal(first + second, 12)
    const statuses = await PaymentOrder.query().whereIn(
      'id',
      orders.map((order) => order.id)
    )
    assert.deepEqual([...new Set(statuses.map((order) => order.status))], ['error'])
    const callbacks = await db.from('callback_outbox').whereIn(
      'order_id',
      orders.map((order) => order.id)
    )
    assert.lengthOf(callbacks, 12, 'one FAIL callback row per order')
    assert.equal(await sweepExpiredPayments(later, 5), 0)
  })

  test('an order that cannot be expired is logged and skipped for the run; the others are expired', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const poisoned = await createOrder(who, 'EXPF1')
    const others = [await createOrder(who, 'EXPF2'), await createOrder(who, 'EXPF3')]
    // The poisoned order is due first; the database refuses to close it.
    await PaymentOrder.query()
      .where('id', poisoned.id)
      .update({ expire_at: DateTime.utc().minus({ minutes: 1 }).toJSDate() })
    await db.rawQuery('DROP TRIGGER IF EXISTS test_refuse_expiry')
    await db.rawQuery(
      `CREATE TRIGGER test_refuse_expiry BEFORE UPDATE ON payment_orders FOR EACH ROW
       BEGIN
         IF OLD.id = ${poisoned.id} AND NEW.status = 'error' THEN
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test';
         END IF;
       END`
    )
    try {
      // Batches of one: the next batch must not pick the poisoned order again.
      const sweep = sweepExpiredPayments(DateTime.utc().plus({ hours: 1 }), 1)
      await assert.rejects(() => sweep, '1 overdue orders could not be expired (2 were)')
    } finally {
      await db.rawQuery('DROP TRIGGER IF EXISTS test_refuse_expiry')
    }
    assert.equal((await poisoned.refresh()).status, 'open')
    for (const order of others) assert.equal((await order.refresh()).status, 'error')
    // The next run expires it.
    assert.equal(await sweepExpiredPayments(DateTime.utc().plus({ hours: 1 })), 1)
  })
})
