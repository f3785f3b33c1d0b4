import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { describePromptPay } from '#payments/promptpay_qr'
import { startSecondGateway } from '#tests/helpers/second_process'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

function createOn(baseUrl: string | undefined, who: TestMerchant, id: string) {
  const body = authBody(who, {
    merchant_order_id: id,
    amount: '500.00',
    bank: 'KBANK',
    account_name: 'Customer',
    account_no: '1234567890',
  })
  return signedPost('/payment/create', who, body, { baseUrl })
}

test.group('payment create under concurrency, two gateway processes', (group) => {
  let second: Awaited<ReturnType<typeof startSecondGateway>>
  group.setup(async () => {
    second = await startSecondGateway()
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(120_000)

  test('500 concurrent creates of one amount on one account never share a transfer_amount', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const responses = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        createOn(i % 2 === 0 ? undefined : second.url, who, `C${i}`)
      )
    )
    const failures = responses.filter((response) => response.status !== 200)
    assert.lengthOf(
      failures,
      0,
      failures
        .slice(0, 3)
        .map((r) => r.text)
        .join('\n')
    )

    const amounts = responses.map((response) =>
      Math.round(response.json.data.transfer_amount * 100)
    )
    assert.equal(new Set(amounts).size, 500, 'transfer_amounts are unique')
    assert.equal(Math.min(...amounts), 50000)
    assert.equal(Math.max(...amounts), 50499, 'the smallest free adjustments were used')
    // The QR carries the same unique amount as the response.
    for (const response of responses.slice(0, 20)) {
      assert.equal(
        describePromptPay(response.json.data.qrcode).amountSatang,
        Math.round(response.json.data.transfer_amount * 100)
      )
    }
    const rows = await db
      .from('payment_orders')
      .where('deposit_account_id', account.id)
      .countDistinct('slot_amount as distinct_slots')
      .count('* as total')
      .first()
    assert.equal(Number(rows.total), 500)
    assert.equal(Number(rows.distinct_slots), 500)
  })

  test('an hourly count limit holds exactly across processes', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr', hourlyCountLimit: 40 })
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        createOn(i % 2 === 0 ? undefined : second.url, who, `H${i}`)
      )
    )
    const statuses = responses.map((response) => response.status)
    assert.equal(statuses.filter((status) => status === 200).length, 40)
    assert.equal(statuses.filter((status) => status === 429).length, 80)
    assert.isTrue(
      responses
        .filter((r) => r.status === 429)
        .every((r) => r.json.error === 'channel-limit-reached')
    )
  })

  test('identical creates on two processes at once: one order, the rest 409', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'qr' })
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        createOn(i % 2 === 0 ? undefined : second.url, who, 'SAME1')
      )
    )
    const statuses = responses.map((response) => response.status)
    assert.equal(
      statuses.filter((status) => status === 200).length,
      1,
      responses.map((r) => r.text).join('\n')
    )
    assert.equal(statuses.filter((status) => status === 409).length, 39)
    const count = await db.from('payment_orders').count('* as total').first()
    assert.equal(Number(count.total), 1)
  })
})
