import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import PaymentOrder from '#payments/models/payment_order'
import { periodUsage } from '#payments/deposit_pool'
import { counterUsage, verifyDepositUsage } from '#payments/deposit_usage_counters'
import { expirePayment } from '#payments/actions/expire_payment'
import { transitionPayment } from '#payments/payment_state'
import { SYSTEM } from '#core/actor'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { startSecondGateway } from '#tests/helpers/second_process'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * Limit usage kept as counters (deposit_usage_counters) and transfer_amount
 * slots kept as rows (deposit_slots): exact under concurrent creates on two
 * gateway processes, always equal to the recount from the orders, and
 * checked and repaired by deposit-usage:verify.
 */

let sequence = 0
function create(who: TestMerchant, amount: string, baseUrl?: string) {
  sequence += 1
  return signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `CNT${sequence}`,
      amount,
      bank: 'KBANK',
      account_name: 'Customer',
      account_no: '1234567890',
    }),
    { baseUrl }
  )
}

function satang(response: Awaited<ReturnType<typeof create>>) {
  if (response.status !== 200) throw new Error(`create failed: ${response.text}`)
  return Math.round(response.json.data.transfer_amount * 100)
}

async function heldSlots(accountId: number) {
  const rows = await db
    .from('deposit_slots')
    .where('deposit_account_id', accountId)
    .where('held', true)
    .orderBy('slot_amount')
    .select('slot_amount')
  return rows.map((row) => Number(row.slot_amount))
}

async function openSlots(accountId: number) {
  const rows = await db
    .from('payment_orders')
    .where('deposit_account_id', accountId)
    .whereNotNull('slot_amount')
    .orderBy('slot_amount')
    .select('slot_amount')
  return rows.map((row) => Number(row.slot_amount))
}

async function pay(orderId: number) {
  await db.transaction(async (trx) => {
    const order = await PaymentOrder.query({ client: trx })
      .where('id', orderId)
      .forUpdate()
      .firstOrFail()
    await transitionPayment(trx, order, {
      to: 'unsettled_paid',
      actor: SYSTEM,
      reason: 'test',
      receipt: { source: 'receivable', received: order.transferAmount },
    })
  })
}

async function fail(orderId: number) {
  await db.transaction(async (trx) => {
    const order = await PaymentOrder.query({ client: trx })
      .where('id', orderId)
      .forUpdate()
      .firstOrFail()
    await transitionPayment(trx, order, {
      to: 'error',
      actor: SYSTEM,
      reason: 'test',
      errorReason: 'rejected',
    })
  })
}

/**
 * Waits, when the next Bangkok hour (and so, at midnight, day) begins within
 * `ms`, until it has begun: the creates of a test then all count in one hour.
 */
async function clearOfHourBoundary(ms: number) {
  const toNextHour = 3_600_000 - (Date.now() % 3_600_000)
  if (toNextHour < ms) await new Promise((resolve) => setTimeout(resolve, toNextHour + 200))
}

/** The answers other than 200, for an assertion's message. */
function failures(responses: Array<Awaited<ReturnType<typeof create>>>) {
  return responses
    .filter((response) => response.status !== 200)
    .slice(0, 3)
    .map((response) => `${response.status} ${response.text}`)
    .join('\n')
}

async function orderOf(response: Awaited<ReturnType<typeof create>>) {
  return PaymentOrder.findByOrFail('uuid', response.json.data.uuid)
}

test.group('deposit usage counters and slots, two gateway processes', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway()
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('hourly amount and daily count limits hold exactly under concurrent creates', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    // Bill-payment accounts take the amount as is: 25 orders of 100.00 fill 2500.00 exactly.
    const byAmount = await createDepositAccount({
      promptpayId: null,
      billerId: '010555012345678',
      hourlyAmountLimit: 250_000,
      priority: 10,
    })
    const byCount = await createDepositAccount({ dailyCountLimit: 15 })
    // The counters are per Bangkok hour and day: not across a boundary.
    await clearOfHourBoundary(10_000)
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, i) => create(who, '100.00', i % 2 ? second.url : undefined))
    )
    const statuses = responses.map((response) => response.status)
    assert.equal(statuses.filter((status) => status === 200).length, 40, statuses.join(','))
    assert.equal(
      statuses.filter((status) => status === 429).length,
      40,
      failures(responses.filter((response) => response.status !== 429))
    )
    assert.isTrue(
      responses
        .filter((response) => response.status === 429)
        .every((response) => response.json.error === 'channel-limit-reached')
    )

    const orders = await db
      .from('payment_orders')
      .groupBy('deposit_account_id')
      .select('deposit_account_id')
      .count('* as total')
      .sum('transfer_amount as amount')
    const per = new Map(orders.map((row) => [Number(row.deposit_account_id), row]))
    assert.equal(Number(per.get(byAmount.id).total), 25)
    assert.equal(Number(per.get(byAmount.id).amount), 250_000)
    assert.equal(Number(per.get(byCount.id).total), 15)

    const counted = await counterUsage(db.connection(), [byAmount, byCount])
    assert.deepEqual(counted.get(byAmount.id), {
      hourCount: 25,
      hourAmount: 250_000,
      dayCount: 25,
      dayAmount: 250_000,
    })
    assert.deepEqual(
      Object.fromEntries(counted),
      Object.fromEntries(await periodUsage(db.connection(), [byAmount, byCount]))
    )
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })

  test('after a mixed run (create, pay, fail, expire) the counters and slots equal the recount from the orders', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const limited = await createDepositAccount({ priority: 10, dailyCountLimit: 30 })
    const other = await createDepositAccount({ bank: 'SCB', promptpayId: '0899999999' })
    const amounts = ['100.00', '100.00', '100.01', '250.00', '100.00']
    await clearOfHourBoundary(10_000)
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        create(who, amounts[i % amounts.length], i % 2 ? second.url : undefined)
      )
    )
    assert.equal(failures(responses), '')
    const orders = await Promise.all(responses.map(orderOf))
    assert.lengthOf(
      orders.filter((order) => order.depositAccountId === limited.id),
      30,
      'the limited account took orders up to its daily count'
    )

    for (const [index, order] of orders.entries()) {
      if (index % 5 === 0) await pay(order.id)
      else if (index % 5 === 1) await fail(order.id)
      else if (index % 5 === 2) await expirePayment(order.id, DateTime.utc().plus({ days: 1 }))
    }
    // Released amounts are handed out again, and count again.
    const more = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(who, '100.00', i % 2 ? second.url : undefined))
    )
    assert.equal(failures(more), '')

    for (const account of [limited, other]) {
      assert.deepEqual(await heldSlots(account.id), await openSlots(account.id))
    }
    const counted = await counterUsage(db.connection(), [limited, other])
    assert.deepEqual(
      Object.fromEntries(counted),
      Object.fromEntries(await periodUsage(db.connection(), [limited, other]))
    )
    // Paid, failed and expired orders still count: 30 on the capped account, all 60 in total.
    assert.equal(counted.get(limited.id)!.dayCount, 30)
    assert.equal(counted.get(limited.id)!.dayCount + counted.get(other.id)!.dayCount, 60)
    const result = await verifyDepositUsage()
    assert.deepEqual(result.drifts, [])
    assert.equal(
      result.slots,
      (await openSlots(limited.id)).length + (await openSlots(other.id)).length
    )
  })

  test('a slot is never given twice, and a released one is given again, smallest first', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const first = await Promise.all(
      Array.from({ length: 60 }, (_, i) => create(who, '500.00', i % 2 ? second.url : undefined))
    )
    const taken = first.map(satang)
    assert.equal(new Set(taken).size, 60)
    assert.deepEqual(
      [...taken].sort((a, b) => a - b),
      Array.from({ length: 60 }, (_, k) => 50_000 + k)
    )

    const byAmount = new Map(
      (await Promise.all(first.map(orderOf))).map((o) => [o.transferAmount, o])
    )
    await pay(byAmount.get(50_003)!.id)
    await expirePayment(byAmount.get(50_000)!.id, DateTime.utc().plus({ days: 1 }))
    await fail(byAmount.get(50_041)!.id)
    assert.notInclude(await heldSlots(account.id), 50_000)

    // One at a time: the smallest free amount each time, then a new one.
    const again = []
    for (let i = 0; i < 4; i++) again.push(satang(await create(who, '500.00')))
    assert.deepEqual(again, [50_000, 50_003, 50_041, 50_060])
    // 500.01 is held: an order of 500.01 gets the next amount no order holds.
    assert.equal(satang(await create(who, '500.01')), 50_061)
    assert.deepEqual(await heldSlots(account.id), await openSlots(account.id))

    // Released again under concurrent creates: each freed amount goes to one order only.
    const open = await PaymentOrder.query()
      .where('deposit_account_id', account.id)
      .where('status', 'open')
      .orderBy('transfer_amount')
      .limit(20)
    for (const order of open) await expirePayment(order.id, DateTime.utc().plus({ days: 1 }))
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(who, '500.00', i % 2 ? second.url : undefined))
    )
    const burstAmounts = burst.map(satang)
    assert.equal(new Set(burstAmounts).size, 30)
    const held = await openSlots(account.id)
    assert.equal(new Set(held).size, held.length)
    assert.deepEqual(await heldSlots(account.id), held)
    for (const order of open) assert.include(burstAmounts, order.transferAmount)
  })
})

test.group('deposit-usage:verify', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('reports a counter or slot changed by hand, exits 1, and --fix restores the recount', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ dailyCountLimit: 10 })
    const orders = []
    for (let i = 0; i < 4; i++) orders.push(await orderOf(await create(who, '100.00')))
    await pay(orders[3].id)

    let result = await ace('deposit-usage:verify', '--json')
    assert.equal(result.code, 0, result.output)
    assert.deepInclude(lastJsonLine(result.stdout), { ok: true, counters: 2, slots: 3 })

    // A day counter three orders short, and the slot of an open order marked free.
    await db
      .from('deposit_usage_counters')
      .where('deposit_account_id', account.id)
      .where('period', 'day')
      .update({ order_count: 1 })
    await db
      .from('deposit_slots')
      .where('deposit_account_id', account.id)
      .where('slot_amount', 10_001)
      .update({ held: false })

    // Creates do not hand out the amount an order still holds.
    assert.equal(satang(await create(who, '100.00')), 10_003)
    await db
      .from('deposit_slots')
      .where('deposit_account_id', account.id)
      .where('slot_amount', 10_001)
      .update({ held: false })

    result = await ace('deposit-usage:verify')
    assert.equal(result.code, 1, result.output)
    assert.include(result.output, 'Deposit usage drift found (2)')
    assert.match(
      result.output,
      /counter: account \d+ day from \S+ 00:00: counter 2 orders \/ 50009 satang, orders 5 \/ 50009/
    )
    assert.include(result.output, 'slot_not_held: account')
    assert.include(result.output, `held by order ${orders[1].platformOrderId}`)

    result = await ace('deposit-usage:verify', '--fix', '--json')
    assert.equal(result.code, 1, result.output)
    const fixed = lastJsonLine(result.stdout)
    assert.isTrue(fixed.fixed)
    assert.sameMembers(
      fixed.drifts.map((drift: { kind: string }) => drift.kind),
      ['counter', 'slot_not_held']
    )

    result = await ace('deposit-usage:verify')
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, 'no drift')
    assert.equal((await counterUsage(db.connection(), [account])).get(account.id)!.dayCount, 5)

    // A held slot no order holds is reported and freed.
    await db
      .table('deposit_slots')
      .insert({ deposit_account_id: account.id, slot_amount: 77_700, held: true })
    const leaked = await verifyDepositUsage({ fix: true })
    assert.deepEqual(
      leaked.drifts.map((drift) => drift.kind),
      ['slot_not_released']
    )
    assert.deepEqual((await verifyDepositUsage()).drifts, [])
  })
})
