import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#models/payment_order'
import PayoutOrder from '#models/payout_order'
import type DepositAccount from '#models/deposit_account'
import { importStatement } from '#reconciliation/import_statement'
import { settleDuePayments } from '#reconciliation/settle_payments'
import { slipMiniQrPayload } from '#reconciliation/sandbox_bank'
import { dispatchPayout } from '#payouts/dispatch_payout'
import { exportBulkPayouts } from '#payouts/bulk_export'
import { verifyLedger } from '#ledger/verify'
import { decodeQr } from '#tests/helpers/qr_decode'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

const exec = promisify(execFile)

async function createPayment(
  who: TestMerchant,
  id: string,
  amount = '100.00',
  path = '/payment/create'
) {
  const response = await signedPost(
    path,
    who,
    authBody(who, {
      merchant_order_id: id,
      amount,
      bank: 'SCB',
      account_name: 'Customer',
      account_no: '1234567890',
      notify_url: 'https://merchant.example.test/cb',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PaymentOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}

function bangkok(date: Date | DateTime) {
  const value = date instanceof Date ? DateTime.fromJSDate(date) : date
  return value.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
}

function neutral(lines: Array<[Date | DateTime, 'credit' | 'debit', string, string?, string?]>) {
  return [
    'date_time,direction,amount,reference,description',
    ...lines.map(([at, direction, amount, reference, description]) =>
      [bangkok(at), direction, `"${amount}"`, reference ?? '', description ?? 'TRANSFER'].join(',')
    ),
  ].join('\n')
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

test.group('statement import and matching', (group) => {
  let account: DepositAccount
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('a credit line pays the open order holding its transfer_amount: ledger, status, PAID row, once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    account = await createDepositAccount({ channel: 'qr' })
    const first = await createPayment(who, 'R1', '1000.00')
    const second = await createPayment(who, 'R2', '1000.00') // transfer_amount 1000.01
    const file = neutral([[new Date(), 'credit', '1,000.01', undefined, 'TRANSFER FROM SCB X7890']])

    const summary = await importStatement(account, 'neutral', 'stmt.csv', file, 'test')
    assert.deepEqual(summary.results, { matched: 1, unmatched: 0, late: 0, skipped: 0 })
    await second.refresh()
    await first.refresh()
    assert.equal(second.status, 'unsettled_paid')
    assert.equal(first.status, 'open')
    assert.equal(second.fee, 15_00) // 1.5 % of 1000.00
    assert.isNull(second.slotAmount)
    assert.isNotNull(second.paidAt)
    assert.deepEqual(await balance(who), { balance: 0, freeze_balance: 0, unsettle_balance: 985 })

    const rows = await db
      .from('callback_outbox')
      .where({ order_type: 'payment', order_id: second.id })
    assert.lengthOf(rows, 1)
    assert.equal(JSON.parse(rows[0].body).status, 'PAID')
    assert.include(rows[0].body, '"amount":1000.00')

    const query = await signedPost(
      '/payment/query',
      who,
      authBody(who, { platform_order_id: second.platformOrderId })
    )
    assert.equal(query.json.data.status, 'unsettled_paid')
    assert.match(query.json.data.payment_datetime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:00$/)

    // The same file again adds nothing.
    const again = await importStatement(account, 'neutral', 'stmt.csv', file, 'test')
    assert.equal(again.newLines, 0)
    assert.lengthOf(await db.from('statement_lines'), 1)
    assert.deepEqual((await verifyLedger()).drifts, [])
    // The adjustment satang went to its own account, not to the merchant.
    const adjustment = await db
      .from('ledger_entries')
      .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
      .where('ledger_accounts.code', 'slot_adjustment')
      .sum('amount as total')
      .first()
    assert.equal(Number(adjustment.total), 1)
  })

  test('another amount, a line outside the slot time, and a payment after expiry are not matched', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, 'R1', '500.00')
    await createPayment(who, 'R2', '500.00') // holds 500.01
    const file = neutral([
      [new Date(), 'credit', '499.99'], // another amount
      [DateTime.utc().minus({ hours: 2 }), 'credit', '500.00'], // before the order existed
    ])
    const summary = await importStatement(account, 'neutral', 'a.csv', file, 'test')
    assert.deepEqual(summary.results, { matched: 0, unmatched: 2, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'open')

    await PaymentOrder.query().where('id', order.id).update({ status: 'error', slot_amount: null })
    const late = await importStatement(
      account,
      'neutral',
      'b.csv',
      neutral([[new Date(), 'credit', '500.00']]),
      'test'
    )
    assert.deepEqual(late.results, { matched: 0, unmatched: 0, late: 1, skipped: 0 })
    const line = await db.from('statement_lines').where('status', 'late').firstOrFail()
    assert.equal(line.note, order.platformOrderId)
    assert.equal((await order.refresh()).status, 'error')
  })

  test('two identical lines in one file are two transfers; the second finds no order', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    account = await createDepositAccount({ channel: 'transfer' })
    const order = await createPayment(who, 'R1', '300.00', '/payment/create-transfer')
    const now = new Date()
    const file = neutral([
      [now, 'credit', '300.00'],
      [now, 'credit', '300.00'],
    ])
    const summary = await importStatement(account, 'neutral', 'c.csv', file, 'test')
    assert.equal(summary.newLines, 2)
    assert.deepEqual(summary.results, { matched: 1, unmatched: 1, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'unsettled_paid')
  })

  test('KBank layout; a bill-payment order is matched by its ref1', async ({ assert }) => {
    const who = await createDepositMerchant()
    account = await createDepositAccount({
      channel: 'qr',
      promptpayId: null,
      billerId: '010555012345678',
    })
    const order = await createPayment(who, 'R1', '250.00')
    const local = DateTime.utc().setZone('Asia/Bangkok')
    const file = [
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
      `${local.toFormat('dd-LL-yy')},${local.toFormat('HH:mm')},Payment Received,,250.00,"12,250.00",K PLUS,Ref1: ${order.paymentReference} Ref2:`,
      `${local.toFormat('dd-LL-yy')},${local.toFormat('HH:mm')},Transfer Withdrawal,"1,000.00",,"11,250.00",K PLUS,To X1234`,
    ].join('\r\n')
    const summary = await importStatement(account, 'kbank', 'kbank.csv', file, 'test')
    assert.deepEqual(summary.results, { matched: 1, unmatched: 1, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    const lines = await db.from('statement_lines').orderBy('id')
    assert.equal(lines[0].reference, order.paymentReference)
    assert.equal(Number(lines[1].amount), 1000_00)
    assert.equal(lines[1].direction, 'debit')
  })

  test('a malformed file imports nothing and says which line is wrong', async ({ assert }) => {
    account = await createDepositAccount()
    const file =
      'date_time,direction,amount\n2026-11-21 10:00,credit,100.00\n2026-11-21 10:01,sideways,5.00\n'
    await assert.rejects(
      () => importStatement(account, 'neutral', 'bad.csv', file, 'test'),
      /line 2: direction/
    )
    await assert.rejects(
      () => importStatement(account, 'neutral', 'bad.csv', 'date,amount\n1,2\n', 'test'),
      /missing column\(s\) date_time, direction/
    )
    assert.lengthOf(await db.from('statement_lines'), 0)
    assert.lengthOf(await db.from('statement_imports'), 0)
  })

  test('two importers at once: each order paid once, each line stored once', async ({ assert }) => {
    const who = await createDepositMerchant()
    account = await createDepositAccount({ channel: 'qr' })
    const orders = []
    for (let i = 0; i < 20; i++) orders.push(await createPayment(who, `P${i}`, '100.00'))
    const now = new Date()
    const file = neutral(
      orders.map((order) => [now, 'credit', (order.transferAmount / 100).toFixed(2)])
    )
    const results = await Promise.all([
      importStatement(account, 'neutral', 'x.csv', file, 'a'),
      importStatement(account, 'neutral', 'x.csv', file, 'b'),
      importStatement(account, 'neutral', 'x.csv', file, 'c'),
    ])
    assert.equal(
      results.reduce((sum, result) => sum + result.results.matched, 0),
      20
    )
    assert.lengthOf(await db.from('statement_lines'), 20)
    const paid = await PaymentOrder.query().where('status', 'unsettled_paid')
    assert.lengthOf(paid, 20)
    const outbox = await db.from('callback_outbox').where('status', 'PAID')
    assert.lengthOf(outbox, 20)
    assert.deepEqual(await balance(who), { balance: 0, freeze_balance: 0, unsettle_balance: 2000 })
  })

  test('settlement of deposits: after the delay, unsettle_balance moves to balance (settled_paid)', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, 'R1', '200.00')
    await importStatement(
      account,
      'neutral',
      's.csv',
      neutral([[new Date(), 'credit', '200.00']]),
      'test'
    )
    assert.equal(await settleDuePayments(), 0, 'not due yet (30 minutes by default)')
    assert.equal(await settleDuePayments({ now: DateTime.utc().plus({ minutes: 31 }) }), 1)
    assert.equal((await order.refresh()).status, 'settled_paid')
    assert.deepEqual(await balance(who), { balance: 198, freeze_balance: 0, unsettle_balance: 0 })
    assert.equal(await settleDuePayments({ ignoreDelay: true }), 0, 'settled once')
    const query = await signedPost(
      '/payment/query',
      who,
      authBody(who, { platform_order_id: order.platformOrderId })
    )
    assert.equal(query.json.data.status, 'settled_paid')
  })

  test('bulk-file payouts: a debit line confirms, a credit line naming the payout returns it', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    account = await createDepositAccount({ channel: 'transfer' })
    const ids = []
    for (const id of ['B1', 'B2']) {
      const response = await signedPost(
        '/withdraw/create',
        who,
        authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: id })
      )
      ids.push(response.json.data.platform_order_id)
    }
    for (const order of await PayoutOrder.all()) await dispatchPayout(order.id)
    await exportBulkPayouts(app.tmpPath('test-payouts'))
    const file = neutral([
      [new Date(), 'debit', '100.00', ids[0], 'BULK TRANSFER'],
      [new Date(), 'credit', '100.00', ids[1], 'RETURNED TRANSFER'],
    ])
    const summary = await importStatement(account, 'neutral', 'p.csv', file, 'test')
    assert.deepEqual(summary.results, { matched: 2, unmatched: 0, late: 0, skipped: 0 })
    const [first, second] = await Promise.all(
      ids.map((id) => PayoutOrder.findByOrFail('platform_order_id', id))
    )
    assert.equal(first.status, 'success')
    assert.equal(second.status, 'failed')
    assert.equal(second.failureReason, 'returned_by_bank')
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('sandbox:pay: the sandbox bank pays an order end to end and writes a slip with its mini-QR', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, 'SB1', '150.00')
    const result = await exec(
      process.execPath,
      ['ace.js', 'sandbox:pay', order.platformOrderId, '--json'],
      {
        cwd: app.appRoot.pathname,
        env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      }
    )
    const output = JSON.parse(result.stdout.trim().split('\n').pop()!)
    assert.equal(output.order_status, 'unsettled_paid')
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    const decoded = await decodeQr(await readFile(output.slipPath))
    assert.equal(decoded, slipMiniQrPayload('014', output.transRef))
    assert.match(decoded!, /^0041000600000101030140220/)
  })
})

test.group('statement import: recovery and edge cases', (group) => {
  group.each.setup(() => resetDatabase())

  test('a reference naming an expired order is late; lines left in new are matched by the next import', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({
      channel: 'qr',
      promptpayId: null,
      billerId: '010555012345678',
    })
    const expired = await createPayment(who, 'L1', '120.00')
    await PaymentOrder.query().where('id', expired.id).update({ status: 'error' })
    const late = await importStatement(
      account,
      'neutral',
      'l.csv',
      neutral([[new Date(), 'credit', '120.00', expired.paymentReference!]]),
      'test'
    )
    assert.deepEqual(late.results, { matched: 0, unmatched: 0, late: 1, skipped: 0 })

    // An import that stopped after storing its lines: they wait in status new.
    const open = await createPayment(who, 'L2', '130.00')
    const [importId] = await db.table('statement_imports').insert({
      deposit_account_id: account.id,
      layout: 'neutral',
      file_name: 'crashed.csv',
      file_sha256: '0'.repeat(64),
      line_count: 1,
      new_lines: 1,
      actor: 'test',
      created_at: new Date(),
    })
    await db.table('statement_lines').insert({
      deposit_account_id: account.id,
      import_id: importId,
      fingerprint: 'f'.repeat(64),
      line_at: new Date(),
      direction: 'credit',
      amount: 130_00,
      reference: open.paymentReference,
      description: 'stored before a crash',
      status: 'new',
      created_at: new Date(),
    })
    const next = await importStatement(
      account,
      'neutral',
      'next.csv',
      neutral([[new Date(), 'credit', '1.00']]),
      'test'
    )
    assert.equal(next.results.matched, 1)
    assert.equal((await open.refresh()).status, 'unsettled_paid')
  })
})
