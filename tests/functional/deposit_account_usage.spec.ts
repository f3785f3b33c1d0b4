import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import MaintenanceWindow from '#payments/models/maintenance_window'
import PaymentOrder from '#payments/models/payment_order'
import DepositAccount from '#payments/models/deposit_account'
import {
  depositAccountUsage,
  describeUsage,
  listDepositAccounts,
  presentUsage,
} from '#payments/deposit_account_usage'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** Usage figures of the pool screen: today's usage beside each limit, and slot occupancy. */

let sequence = 0
async function order(who: TestMerchant, amount: string, path = '/payment/create-transfer') {
  sequence += 1
  const response = await signedPost(
    path,
    who,
    authBody(who, {
      merchant_order_id: `USE${sequence}`,
      amount,
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PaymentOrder.findByOrFail('uuid', response.json.data.uuid)
}

/** 12:30 today in Bangkok: the "now" the figures are taken at. */
const NOW = DateTime.now().setZone('Asia/Bangkok').set({ hour: 12, minute: 30 }).startOf('minute')

function at(hour: number, minute: number, days = 0) {
  return NOW.plus({ days }).set({ hour, minute }).toUTC().toJSDate()
}

test.group('deposit account usage', (group) => {
  group.each.setup(() => resetDatabase())

  test('usage beside every limit, per Bangkok hour and day, and the fullest amount of slots', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const transfer = await createDepositAccount({
      channel: 'transfer',
      hourlyCountLimit: 30,
      dailyAmountLimit: 1_000_000,
      priority: 10,
    })
    const quiet = await createDepositAccount({ channel: 'transfer', hourlyAmountLimit: 500_000 })
    const biller = await createDepositAccount({
      channel: 'qr',
      promptpayId: null,
      billerId: '010555012345678',
    })

    const orders = [
      await order(who, '500.00'), // 500.00
      await order(who, '500.00'), // 500.01
      await order(who, '500.01'), // 500.02
      await order(who, '500.00'), // 500.03
      await order(who, '100.00'), // 100.00
    ]
    assert.deepEqual(
      orders.map((row) => [row.depositAccountId, row.transferAmount]),
      [
        [transfer.id, 50_000],
        [transfer.id, 50_001],
        [transfer.id, 50_002],
        [transfer.id, 50_003],
        [transfer.id, 10_000],
      ]
    )
    const billed = await order(who, '250.00', '/payment/create')
    assert.equal(billed.depositAccountId, biller.id)

    // Two orders this hour, two earlier today, one yesterday (not counted);
    // the 100.00 order is over, its slot free again.
    const times = [at(12, 10), at(12, 29), at(9, 0), at(0, 0), at(23, 59, -1)]
    for (const [index, row] of orders.entries()) {
      await db.from('payment_orders').where('id', row.id).update({ created_at: times[index] })
    }
    await db
      .from('payment_orders')
      .where('id', orders[4].id)
      .update({ slot_amount: null, status: 'error' })
    await db
      .from('payment_orders')
      .where('id', billed.id)
      .update({ created_at: at(12, 0) })

    const window = await MaintenanceWindow.create({
      depositAccountId: quiet.id,
      startsAt: NOW.minus({ minutes: 1 }).toUTC(),
      endsAt: NOW.plus({ hours: 2 }).toUTC(),
      reason: 'r',
      createdBy: 'test',
    })

    const accounts = await listDepositAccounts()
    const usage = await depositAccountUsage(accounts, NOW)
    assert.sameMembers([...usage.keys()], [transfer.id, quiet.id, biller.id])

    assert.deepEqual(presentUsage(usage.get(transfer.id)!), {
      hour: { count: 2, count_limit: 30, amount: '1000.01', amount_limit: null },
      day: { count: 4, count_limit: null, amount: '2000.06', amount_limit: '10000.00' },
      // 500.00 … 509.99: 500.00, 500.01, 500.02 and 500.03 are held; from 500.01 only three.
      slots: { taken: 4, of: 1000, at: '500.00' },
      maintenance_until: null,
    })
    assert.equal(
      describeUsage(usage.get(transfer.id)!),
      'hour 2/30 orders, 1000.01 THB; day 4 orders, 2000.06/10000.00 THB; slots 4 of 1000 at 500.00'
    )

    assert.deepEqual(presentUsage(usage.get(quiet.id)!), {
      hour: { count: 0, count_limit: null, amount: '0.00', amount_limit: '5000.00' },
      day: { count: 0, count_limit: null, amount: '0.00', amount_limit: null },
      slots: null,
      maintenance_until: window.endsAt.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm:ss'),
    })
    assert.include(describeUsage(usage.get(quiet.id)!), 'slots none taken; maintenance until ')

    // Bill-payment orders hold no slot: they are matched by reference.
    assert.deepInclude(presentUsage(usage.get(biller.id)!), {
      hour: { count: 1, count_limit: null, amount: '250.00', amount_limit: null },
      slots: null,
    })
  })

  test('a bank-wide window shows on every account of the bank; an empty list has no figures', async ({
    assert,
  }) => {
    const kbank = await createDepositAccount({ bank: 'KBANK' })
    const scb = await createDepositAccount({ bank: 'SCB', channel: 'transfer' })
    await MaintenanceWindow.create({
      bank: 'KBANK',
      startsAt: DateTime.utc().minus({ minutes: 1 }),
      endsAt: DateTime.utc().plus({ hours: 1 }),
      reason: 'r',
      createdBy: 'test',
    })
    const usage = await depositAccountUsage(await DepositAccount.all())
    assert.isNotNull(presentUsage(usage.get(kbank.id)!).maintenance_until)
    assert.isNull(presentUsage(usage.get(scb.id)!).maintenance_until)
    assert.equal((await depositAccountUsage([])).size, 0)
  })
})
