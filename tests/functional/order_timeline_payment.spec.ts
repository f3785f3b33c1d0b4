import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type PaymentOrder from '#payments/models/payment_order'
import { importStatement } from '#reconciliation/actions/import_statement'
import { expirePayment } from '#payments/actions/expire_payment'
import { orderTimeline } from '#core/order_events'
import { formatAmount } from '#core/money'
import { ace } from '#tests/helpers/ace'
import {
  createDepositAccount,
  createDepositMerchant,
  createPaymentOrder,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** The order page's timeline: each event as (from, to, actor, reason). */
async function timeline(order: PaymentOrder) {
  return (await orderTimeline('payment', order.id)).map((event) => [
    event.fromStatus,
    event.toStatus,
    event.actor,
    event.reason,
  ])
}

function createPayment(who: TestMerchant, merchantOrderId: string) {
  return createPaymentOrder(who, merchantOrderId, '100.00', '/payment/create', {
    notify_url: undefined,
  })
}

function statement(lines: Array<[number, DateTime?]>) {
  return [
    'date_time,direction,amount,reference,description',
    ...lines.map(
      ([amount, at]) =>
        `${(at ?? DateTime.utc()).setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')},credit,"${formatAmount(amount)}",,TRANSFER`
    ),
  ].join('\n')
}

test.group('order timeline: payment', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('created, paid by a statement line, settled by settle:run: one event each, with its actor', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, 'T1')
    const merchant = `merchant:${who.merchantId}`
    assert.deepEqual(await timeline(order), [[null, 'open', merchant, null]])

    await importStatement(
      {
        deposit_account_id: account.id,
        file_name: 't.csv',
        content: statement([[order.transferAmount]]),
      },
      { name: 'operator:ops@example.test' }
    )
    const line = await db.from('statement_lines').where('status', 'matched').firstOrFail()
    assert.deepEqual(await timeline(order), [
      [null, 'open', merchant, null],
      ['open', 'unsettled_paid', 'system', `statement line ${line.id}`],
    ])

    const run = await ace('settle:run', '--now')
    assert.equal(run.code, 0, run.output)
    const events = await timeline(order)
    assert.lengthOf(events, 3)
    assert.deepEqual(events[2].slice(0, 2), ['unsettled_paid', 'settled_paid'])
    assert.match(String(events[2][2]), /^cli:/)
    assert.equal(events[2][3], 'settled')
    assert.equal((await order.refresh()).status, 'settled_paid')
  })

  test('expired, then a late credit: the late line leaves the timeline as it is', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, 'T2')
    assert.isTrue(await expirePayment(order.id, DateTime.utc().plus({ hours: 1 })))
    const summary = await importStatement(
      {
        deposit_account_id: account.id,
        file_name: 'late.csv',
        content: statement([[order.transferAmount]]),
      },
      { name: 'operator:ops@example.test' }
    )
    assert.equal(summary.results.late, 1)
    assert.deepEqual(await timeline(order), [
      [null, 'open', `merchant:${who.merchantId}`, null],
      ['open', 'error', 'system', 'expired'],
    ])
  })
})
