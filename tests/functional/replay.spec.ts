import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { epochSeconds } from '#core/clock'
import { purgeOldRequests } from '#core/merchant_requests'
import { startSecondGateway } from '#tests/helpers/second_process'
import { assertError } from '#tests/helpers/envelope'
import { sandboxSlip } from '#tests/helpers/slips'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  creditMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/**
 * The same request gets the same answer: a merchant whose response was lost
 * sends the same signed bytes again and is answered what the first was, on
 * any web process, while nothing runs twice.
 */

async function payoutCount() {
  const row = await db.from('payout_orders').count('* as total').first()
  return Number(row.total)
}

test.group('the same request, the same answer', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway()
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('the same signed bytes of /withdraw/create pay out once and get the original answer, on any process', async ({
    assert,
  }) => {
    // The 3-minute duplicate check is off: only the request's key stands in the way.
    const who = await createPayoutMerchant(1000_00, { withdrawDuplicateCheck: false })
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R1' })

    const first = await signedPost('/withdraw/create', who, body)
    assert.equal(first.status, 200, first.text)
    const again = await signedPost('/withdraw/create', who, body)
    assert.equal(again.status, 200, again.text)
    assert.equal(again.text, first.text)
    const elsewhere = await signedPost('/withdraw/create', who, body, { baseUrl: second.url })
    assert.equal(elsewhere.text, first.text)

    assert.equal(await payoutCount(), 1)
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.deepEqual(balance, { balance: 900, freeze_balance: 100, unsettle_balance: 0 })
  })

  test('identical bytes racing on two processes: exactly one withdrawal, every answer the same', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00)
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R2' })
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        signedPost('/withdraw/create', who, body, { baseUrl: i % 2 ? second.url : undefined })
      )
    )
    const statuses = responses.map((response) => response.status)
    const refused = responses.filter((response) => response.status !== 200)
    assert.deepEqual([...new Set(statuses)], [200], refused.map((r) => r.text).join('\n'))
    assert.lengthOf(new Set(responses.map((response) => response.text)), 1)
    assert.equal(await payoutCount(), 1)
  })

  test('a refusal is answered again as it was, even when it would not be refused now', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(50_00)
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R5' })
    const refused = await signedPost('/withdraw/create', who, body)
    assertError(assert, refused, 400, 'invalid-inputs', /insufficient balance/)
    // The merchant's balance grows: the same bytes are still that refused request.
    await db
      .from('merchant_balances')
      .where('merchant_id', who.merchant.id)
      .update({ balance: 1000_00 })
    const again = await signedPost('/withdraw/create', who, body, { baseUrl: second.url })
    assert.equal(again.status, 400)
    assert.equal(again.text, refused.text)
    assert.equal(await payoutCount(), 0)
  })

  test('a fresh request with the same fields is a new request', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00)
    const fields = { ...PAYOUT_FIELDS, merchant_order_id: 'R3' }
    const now = epochSeconds()
    const first = await signedPost('/withdraw/create', who, authBody(who, fields, now))
    const fresh = await signedPost('/withdraw/create', who, authBody(who, fields, now + 1))
    assert.equal(first.status, 200, first.text)
    assert.equal(fresh.status, 200, fresh.text)
    assert.notEqual(first.json.data.platform_order_id, fresh.json.data.platform_order_id)
    assert.equal(await payoutCount(), 2)
  })

  test('reads are not guarded: the same /balance or query bytes twice both answer', async ({
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

  test('payment and settlement creates answer the same bytes with the original order', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ payoutRoute: 'sandbox' })
    await createDepositAccount({ channel: 'transfer' })
    const body = authBody(who, {
      merchant_order_id: 'RP1',
      amount: '100.00',
      bank: 'KBANK',
      account_name: 'Somchai',
      account_no: '1234567890',
    })
    const first = await signedPost('/payment/create-transfer', who, body)
    assert.equal(first.status, 200, first.text)
    const again = await signedPost('/payment/create-transfer', who, body, { baseUrl: second.url })
    assert.equal(again.text, first.text)
    const orders = await db.from('payment_orders').count('* as total').first()
    assert.equal(Number(orders.total), 1)

    // A settlement's answer says open, as it did, even once the order moved on.
    await creditMerchant(who.merchant, 'available', 1000_00)
    const settlementBody = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'RM1' })
    const settlement = await signedPost('/thb-settlement/create', who, settlementBody)
    assert.equal(settlement.status, 200, settlement.text)
    assert.equal(settlement.json.data.status, 'open')
    await db
      .from('payout_orders')
      .where('platform_order_id', settlement.json.data.platform_order_id)
      .update({ status: 'success' })
    const settlementAgain = await signedPost('/thb-settlement/create', who, settlementBody, {
      baseUrl: second.url,
    })
    assert.equal(settlementAgain.text, settlement.text)

    // The same merchant_order_id in a new request is the spec's duplicate.
    const fresh = authBody(who, {
      merchant_order_id: 'RP1',
      amount: '100.00',
      bank: 'KBANK',
      account_name: 'Somchai',
      account_no: '1234567890',
    })
    assertError(
      assert,
      await signedPost('/payment/create-transfer', who, fresh),
      409,
      'duplicate-entry'
    )
  })

  test('a slip upload sent again gets its original answer; a new upload within 5 minutes gets 429', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'transfer' })
    // Slips are accepted from slip_upload_wait_seconds after creation.
    await db.from('merchants').where('id', who.merchant.id).update({ slip_upload_wait_seconds: 0 })
    const created = await signedPost(
      '/payment/create-transfer',
      who,
      authBody(who, {
        merchant_order_id: 'RS1',
        amount: '150.00',
        bank: 'KBANK',
        account_name: 'Somchai',
        account_no: '1234567890',
      })
    )
    const image = (await sandboxSlip()).toString('base64')
    const fields = { platform_order_id: created.json.data.platform_order_id, image_base64: image }
    const body = authBody(who, fields)
    const first = await signedPost('/slip/upload', who, body)
    assert.equal(first.status, 200, first.text)
    const again = await signedPost('/slip/upload', who, body, { baseUrl: second.url })
    assert.equal(again.text, first.text)
    const slips = await db.from('payment_slips').count('* as total').first()
    assert.equal(Number(slips.total), 1)

    // Identical uploads racing on both processes: the ones that find the
    // first's slip (the spec's 5-minute rule) are still answered its answer.
    const order = await signedPost(
      '/payment/create-transfer',
      who,
      authBody(who, {
        merchant_order_id: 'RS2',
        amount: '150.00',
        bank: 'KBANK',
        account_name: 'Somchai',
        account_no: '1234567890',
      })
    )
    const raceBody = authBody(who, {
      platform_order_id: order.json.data.platform_order_id,
      image_base64: image,
    })
    // Staggered over the first's run, so that some check the order after it committed.
    const race = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 25))
        return signedPost('/slip/upload', who, raceBody, {
          baseUrl: i % 2 ? second.url : undefined,
        })
      })
    )
    assert.deepEqual(
      [...new Set(race.map((response) => response.status))],
      [200],
      race.map((response) => response.text).join('\n')
    )
    assert.lengthOf(new Set(race.map((response) => response.text)), 1)
    const raced = await db.from('payment_slips').count('* as total').first()
    assert.equal(Number(raced.total), 2)
    assertError(
      assert,
      await signedPost('/slip/upload', who, authBody(who, fields)),
      429,
      'too-many-requests'
    )
  })
  test('answers are kept a day, then purged by the worker job', async ({ assert }) => {
    const who = await createPayoutMerchant(1000_00)
    const body = authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R6' })
    const first = await signedPost('/withdraw/create', who, body)
    assert.equal(first.status, 200, first.text)
    const row = await db.from('merchant_requests').where('merchant_id', who.merchant.id).first()
    assert.equal(row.endpoint, '/withdraw/create')
    assert.equal(row.order_type, 'withdraw')
    // Written once, first in the create's batch: it names the order it created.
    assert.equal(row.platform_order_id, first.json.data.platform_order_id)
    assert.isNull(row.order_id)

    const now = new Date()
    assert.equal(await purgeOldRequests(now), 0)
    assert.equal(await purgeOldRequests(new Date(now.getTime() + 23 * 3_600_000)), 0)
    assert.equal(await purgeOldRequests(new Date(now.getTime() + 25 * 3_600_000)), 1)
    assert.isNull(await db.from('merchant_requests').first())
  })
})
