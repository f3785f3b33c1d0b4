import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import MaintenanceWindow from '#payments/models/maintenance_window'
import PaymentOrder from '#payments/models/payment_order'
import { eligibleAccounts } from '#payments/deposit_pool'
import { verifyDepositUsage } from '#payments/deposit_usage_counters'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * Which accounts of a deposit group payment create tries, and in which
 * order: accounts inside a maintenance window are left out; an account
 * without room under its limits is tried only after every account with room.
 */

let sequence = 0
function create(who: TestMerchant, amount = '100.00') {
  sequence += 1
  return signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `SEL${sequence}`,
      amount,
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
}

/** The deposit account the order of a 200 answer was drawn on. */
async function accountOf(response: Awaited<ReturnType<typeof create>>) {
  if (response.status !== 200) throw new Error(`create failed: ${response.text}`)
  const order = await PaymentOrder.findByOrFail('uuid', response.json.data.uuid)
  return order.depositAccountId
}

async function ids(amount = 10_000) {
  return (await eligibleAccounts('test-group', ['qr'], amount)).map((account) => account.id)
}

function window(fields: Partial<MaintenanceWindow>) {
  const now = DateTime.utc()
  return MaintenanceWindow.create({
    startsAt: now.minus({ minutes: 5 }),
    endsAt: now.plus({ hours: 1 }),
    reason: 'bank maintenance',
    createdBy: 'test',
    ...fields,
  })
}

test.group('deposit pool selection: maintenance windows', (group) => {
  group.each.setup(() => resetDatabase())

  test('an account inside a window is not selected; it comes back when the window ends', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const first = await createDepositAccount({ priority: 10 })
    const second = await createDepositAccount({ bank: 'SCB', promptpayId: '0899999999' })
    const current = await window({ depositAccountId: first.id })
    assert.deepEqual(await ids(), [second.id])
    assert.equal(await accountOf(await create(who)), second.id)

    // A window that has ended, one still to come and a cancelled one take nothing out.
    const now = DateTime.utc()
    current.endsAt = now.minus({ seconds: 1 })
    await current.save()
    await window({ depositAccountId: first.id, startsAt: now.plus({ minutes: 10 }) })
    await window({ depositAccountId: first.id, cancelledAt: now, cancelledBy: 'test' })
    assert.deepEqual(await ids(), [first.id, second.id])
    assert.equal(await accountOf(await create(who)), first.id)
  })

  test('a bank window takes out every account of that bank, whatever its group', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const kbank = await createDepositAccount({ priority: 10 })
    const kbankToo = await createDepositAccount({ promptpayId: '0811111111' })
    const scb = await createDepositAccount({ bank: 'SCB', promptpayId: '0899999999' })
    const elsewhere = await createDepositAccount({ depositGroup: 'other-group' })
    await window({ bank: 'KBANK' })
    assert.deepEqual(await ids(), [scb.id])
    assert.notInclude(await ids(), kbankToo.id)
    assert.lengthOf(await eligibleAccounts('other-group', ['qr'], 10_000), 0)
    await elsewhere.merge({ bank: 'BBL' }).save()
    assert.lengthOf(await eligibleAccounts('other-group', ['qr'], 10_000), 1)

    await window({ bank: 'SCB', startsAt: DateTime.utc().minus({ seconds: 1 }) })
    assert.deepEqual(await ids(), [])
    // Nothing left to draw on: 503, as when every account is inactive.
    assertError(assert, await create(who), 503, 'service-unavailable')
    assert.lengthOf(await PaymentOrder.query().where('deposit_account_id', kbank.id), 0)
  })
})

test.group('deposit pool selection: limits', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('an account that reached its daily amount cap is tried after the accounts with room', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const capped = await createDepositAccount({ priority: 10, dailyAmountLimit: 15_000 })
    const other = await createDepositAccount({ bank: 'SCB', promptpayId: '0899999999' })
    assert.equal(await accountOf(await create(who)), capped.id)
    // 100.00 more would pass 150.00 today: the account leaves the front of selection.
    assert.deepEqual(await ids(), [other.id, capped.id])
    assert.equal(await accountOf(await create(who)), other.id)
    // A smaller amount still fits under the cap: the account keeps its priority for it.
    assert.deepEqual(await ids(2000), [capped.id, other.id])

    // With the other account gone too, the create is refused for limits (429), as before.
    await other.merge({ active: false }).save()
    assertError(assert, await create(who), 429, 'channel-limit-reached')

    // The next Bangkok day the account is back in front.
    const dayStart = DateTime.now().setZone('Asia/Bangkok').startOf('day').toUTC()
    await db
      .from('payment_orders')
      .update({ created_at: dayStart.minus({ minutes: 1 }).toJSDate() })
    // The limit counters follow the orders, as deposit-usage:verify --fix recounts them.
    await verifyDepositUsage({ fix: true })
    await other.merge({ active: true }).save()
    assert.deepEqual(await ids(), [capped.id, other.id])
    assert.equal(await accountOf(await create(who)), capped.id)
  })

  test('a capped account is not even locked while another account has room', async ({ assert }) => {
    const who = await createDepositMerchant()
    const capped = await createDepositAccount({ priority: 10, dailyCountLimit: 1 })
    const other = await createDepositAccount({ bank: 'SCB', promptpayId: '0899999999' })
    assert.equal(await accountOf(await create(who)), capped.id)

    // Another transaction holds the capped account's row (e.g. a slow create on it).
    const holder = await db.transaction()
    try {
      await holder.from('deposit_accounts').where('id', capped.id).forUpdate().first()
      const answer = await Promise.race([
        create(who),
        new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5000)),
      ])
      assert.notEqual(answer, 'waited', 'the create waited for the capped account')
      if (answer !== 'waited') assert.equal(await accountOf(answer), other.id)
    } finally {
      await holder.rollback()
    }
  })
})
