import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { settleDuePayments, settlePayments } from '#payments/actions/settle_payment'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { buildSlipMiniQr } from '#slips/mini_qr'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { releaseOverdueHolds, releasePayoutHold } from '#payouts/actions/complete_payout'
import { verifyLedger } from '#ledger/verify'
import { orderTimeline } from '#core/order_events'
import { formatAmount } from '#core/money'
import { ActionError } from '#core/validation'
import { decodeQr } from '#tests/helpers/qr_decode'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
  createPaymentOrder,
} from '#tests/helpers/merchants'

const exec = promisify(execFile)

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

/** The import-statement action, as an operator named `actor` runs it. */
function importFile(
  account: DepositAccount,
  fileName: string,
  content: string,
  options: { layout?: string; actor?: string } = {}
) {
  return importStatement(
    { deposit_account_id: account.id, layout: options.layout, file_name: fileName, content },
    { name: options.actor ?? 'test' }
  )
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
    const first = await createPaymentOrder(who, 'R1', '1000.00')
    const second = await createPaymentOrder(who, 'R2', '1000.00') // transfer_amount 1000.01
    const file = neutral([[new Date(), 'credit', '1,000.01', undefined, 'TRANSFER FROM SCB X7890']])

    const summary = await importFile(account, 'stmt.csv', file)
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
    const again = await importFile(account, 'stmt.csv', file)
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
    const order = await createPaymentOrder(who, 'R1', '500.00')
    await createPaymentOrder(who, 'R2', '500.00') // holds 500.01
    const file = neutral([
      [new Date(), 'credit', '499.99'], // another amount
      [DateTime.utc().minus({ hours: 2 }), 'credit', '500.00'], // before the order existed
    ])
    const summary = await importFile(account, 'a.csv', file)
    assert.deepEqual(summary.results, { matched: 0, unmatched: 2, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'open')

    await PaymentOrder.query().where('id', order.id).update({ status: 'error', slot_amount: null })
    const late = await importFile(account, 'b.csv', neutral([[new Date(), 'credit', '500.00']]))
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
    const order = await createPaymentOrder(who, 'R1', '300.00', '/payment/create-transfer')
    const now = new Date()
    const file = neutral([
      [now, 'credit', '300.00'],
      [now, 'credit', '300.00'],
    ])
    const summary = await importFile(account, 'c.csv', file)
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
    const order = await createPaymentOrder(who, 'R1', '250.00')
    const local = DateTime.utc().setZone('Asia/Bangkok')
    const file = [
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
      `${local.toFormat('dd-LL-yy')},${local.toFormat('HH:mm')},Payment Received,,250.00,"12,250.00",K PLUS,Ref1: ${order.paymentReference} Ref2:`,
      `${local.toFormat('dd-LL-yy')},${local.toFormat('HH:mm')},Transfer Withdrawal,"1,000.00",,"11,250.00",K PLUS,To X1234`,
    ].join('\r\n')
    const summary = await importFile(account, 'kbank.csv', file, { layout: 'kbank' })
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
      () => importFile(account, 'bad.csv', file),
      /line 3, column direction: direction/
    )
    await assert.rejects(
      () => importFile(account, 'bad.csv', 'date,amount\n1,2\n'),
      /missing column\(s\) date_time, direction/
    )
    assert.lengthOf(await db.from('statement_lines'), 0)
    assert.lengthOf(await db.from('statement_imports'), 0)
  })

  test('two importers at once: each order paid once, each line stored once', async ({ assert }) => {
    const who = await createDepositMerchant()
    account = await createDepositAccount({ channel: 'qr' })
    const orders = []
    for (let i = 0; i < 20; i++) orders.push(await createPaymentOrder(who, `P${i}`, '100.00'))
    const now = new Date()
    const file = neutral(
      orders.map((order) => [now, 'credit', (order.transferAmount / 100).toFixed(2)])
    )
    const results = await Promise.all([
      importFile(account, 'x.csv', file, { actor: 'a' }),
      importFile(account, 'x.csv', file, { actor: 'b' }),
      importFile(account, 'x.csv', file, { actor: 'c' }),
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
    const order = await createPaymentOrder(who, 'R1', '200.00')
    await importFile(account, 's.csv', neutral([[new Date(), 'credit', '200.00']]))
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
    await exportBulkFile({ directory: app.tmpPath('test-payouts') }, { name: 'test' })
    const file = neutral([
      [new Date(), 'debit', '100.00', ids[0], 'BULK TRANSFER'],
      [new Date(), 'credit', '100.00', ids[1], 'RETURNED TRANSFER'],
    ])
    const summary = await importFile(account, 'p.csv', file)
    assert.deepEqual(summary.results, { matched: 2, unmatched: 0, late: 0, skipped: 0 })
    const [first, second] = await Promise.all(
      ids.map((id) => PayoutOrder.findByOrFail('platform_order_id', id))
    )
    assert.equal(first.status, 'success')
    assert.equal(second.status, 'failed')
    assert.equal(second.failureReason, 'returned_by_bank')
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('a 1.00 credit naming a 100.00 bulk-file payout is no return: the payout stays at the bank, its debit then confirms it', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    account = await createDepositAccount({ channel: 'transfer' })
    const response = await signedPost(
      '/withdraw/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'R1' })
    )
    const id = response.json.data.platform_order_id
    const payout = await PayoutOrder.findByOrFail('platform_order_id', id)
    await dispatchPayout(payout.id)
    await exportBulkFile({ directory: app.tmpPath('test-payouts') }, { name: 'test' })

    const small = await importFile(
      account,
      'small.csv',
      neutral([[new Date(), 'credit', '1.00', id, 'RETURNED TRANSFER']])
    )
    assert.deepEqual(small.results, { matched: 0, unmatched: 1, late: 0, skipped: 0 })
    const line = await db.from('statement_lines').where('import_id', small.importId).firstOrFail()
    assert.equal(line.status, 'unmatched')
    assert.equal(line.note, `${id}: a return of 10000 satang is expected`)
    assert.equal((await payout.refresh()).status, 'pending')
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 100, unsettle_balance: 0 })

    const debit = await importFile(
      account,
      'debit.csv',
      neutral([[new Date(), 'debit', '100.00', id, 'BULK TRANSFER']])
    )
    assert.equal(debit.results.matched, 1)
    assert.equal((await payout.refresh()).status, 'success')
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('a bulk-file payout keeps its hold while its file is at the bank; one not yet exported is released after the hold period', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    account = await createDepositAccount({ channel: 'transfer' })
    const create = async (id: string) => {
      const response = await signedPost(
        '/withdraw/create',
        who,
        authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: id })
      )
      const order = await PayoutOrder.findByOrFail(
        'platform_order_id',
        response.json.data.platform_order_id
      )
      await dispatchPayout(order.id)
      return order
    }
    const exported = await create('H1')
    await exportBulkFile({ directory: app.tmpPath('test-payouts') }, { name: 'test' })
    const waiting = await create('H2')
    assert.equal((await exported.refresh()).status, 'pending')
    assert.notEqual((await waiting.refresh()).status, 'pending')

    // An hour later, neither has a final answer: only the one still with us gives its hold back.
    assert.equal(await releaseOverdueHolds(DateTime.utc().plus({ hours: 1 })), 1)
    assert.equal((await exported.refresh()).holdState, 'held')
    assert.equal((await waiting.refresh()).holdState, 'released')
    assert.equal(await releasePayoutHold(exported.id, DateTime.utc().plus({ hours: 1 })), false)
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 100, unsettle_balance: 0 })

    // The bank's debit settles it from the hold: never below what was there.
    const summary = await importFile(
      account,
      'h.csv',
      neutral([[new Date(), 'debit', '100.00', exported.platformOrderId, 'BULK TRANSFER']])
    )
    assert.equal(summary.results.matched, 1)
    assert.equal((await exported.refresh()).status, 'success')
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 0, unsettle_balance: 0 })
  })

  test('sandbox:pay: the sandbox bank pays an order end to end and writes a slip with its mini-QR', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const order = await createPaymentOrder(who, 'SB1', '150.00')
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
    assert.equal(decoded, buildSlipMiniQr('014', output.transRef))
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
    const expired = await createPaymentOrder(who, 'L1', '120.00')
    await PaymentOrder.query().where('id', expired.id).update({ status: 'error' })
    const late = await importFile(
      account,
      'l.csv',
      neutral([[new Date(), 'credit', '120.00', expired.paymentReference!]])
    )
    assert.deepEqual(late.results, { matched: 0, unmatched: 0, late: 1, skipped: 0 })

    // An import that stopped after storing its lines: they wait in status new.
    const open = await createPaymentOrder(who, 'L2', '130.00')
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
    const next = await importFile(account, 'next.csv', neutral([[new Date(), 'credit', '1.00']]))
    assert.equal(next.results.matched, 1)
    assert.equal((await open.refresh()).status, 'unsettled_paid')
  })
})

/** The ActionError an action throws (fails the test if it resolves or throws something else). */
async function actionError(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (thrown) => thrown
  )
  if (!(error instanceof ActionError)) throw new Error(`expected an ActionError, got ${error}`)
  return error
}

/** An operator whose audit row cannot be stored (request_id is at most 128 characters). */
const UNAUDITABLE = { name: 'test', requestId: 'r'.repeat(200) }

test.group('statement import, sandbox:pay and settle:run as operator actions', (group) => {
  let directory: string
  group.each.setup(async () => {
    await resetDatabase()
    directory = await mkdtemp(join(tmpdir(), 'gw-statements-'))
    return () => rm(directory, { recursive: true, force: true })
  })
  group.each.timeout(60_000)

  test('a credit paying an order that expired more than 7 days ago is late, not unmatched, through statements:import', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const order = await createPaymentOrder(who, 'OLD1', '300.00', '/payment/create-transfer')
    const longAgo = DateTime.utc().minus({ days: 10 })
    await PaymentOrder.query()
      .where('id', order.id)
      .update({
        status: 'error',
        slot_amount: null,
        order_at: longAgo.toJSDate(),
        expire_at: longAgo.plus({ minutes: 15 }).toJSDate(),
      })
    const path = join(directory, 'old-credit.csv')
    await writeFile(path, neutral([[new Date(), 'credit', formatAmount(order.transferAmount)]]))

    const result = await ace('statements:import', path, `--account=${account.id}`, '--json')
    assert.equal(result.code, 0, result.output)
    assert.deepEqual(lastJsonLine(result.stdout).results, {
      matched: 0,
      unmatched: 0,
      late: 1,
      skipped: 0,
    })
    const line = await db.from('statement_lines').firstOrFail()
    assert.equal(line.status, 'late')
    assert.equal(line.note, order.platformOrderId)
    assert.equal((await order.refresh()).status, 'error')
  })

  test('lines no order can claim get the notes the matcher gives them', async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPaymentOrder(who, 'N1', '100.00')
    const summary = await importFile(
      account,
      'n.csv',
      neutral([
        [new Date(), 'debit', '50.00', undefined, 'FEE'],
        [new Date(), 'credit', '77.00'],
        [new Date(), 'credit', formatAmount(order.transferAmount)],
      ])
    )
    assert.deepEqual(summary.results, { matched: 1, unmatched: 2, late: 0, skipped: 0 })
    const lines = await db.from('statement_lines').orderBy('id')
    assert.deepEqual(
      lines.map((line) => [line.status, line.note]),
      [
        ['unmatched', 'debit without a payout reference'],
        ['unmatched', 'no open order'],
        ['matched', null],
      ]
    )
  })

  test('import: every field error names its field; nothing is written; the CLI shows the same messages', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const invalid = await actionError(
      importStatement(
        { deposit_account_id: 'first', layout: 'csv', file_name: '', content: '' },
        { name: 'test' }
      )
    )
    assert.deepEqual(invalid.errors, [
      { field: 'deposit_account_id', message: 'deposit_account_id must be a number' },
      { field: 'layout', message: 'layout must be one of: neutral, kbank, kbiz' },
      { field: 'file_name', message: 'file_name is required' },
      { field: 'content', message: 'content is required: the file is empty' },
    ])

    const malformed =
      'date_time,direction,amount\n2026-11-21 10:00,credit,100.00\n2026-11-21 10:01,sideways,5.00\n'
    const bad = await actionError(
      importStatement(
        { deposit_account_id: account.id, file_name: 'bad.csv', content: malformed },
        { name: 'test' }
      )
    )
    assert.deepEqual(bad.errors, [
      {
        field: 'content',
        message:
          'Nothing imported: bad.csv, neutral: line 3, column direction: direction must be credit or debit',
      },
    ])
    const unknown = await actionError(
      importStatement(
        {
          deposit_account_id: account.id + 1000,
          file_name: 'a.csv',
          content: 'date_time,direction,amount\n',
        },
        { name: 'test' }
      )
    )
    assert.isTrue(unknown.notFound)
    assert.deepEqual(unknown.errors, [
      { field: 'deposit_account_id', message: `No deposit account ${account.id + 1000}` },
    ])

    const badPath = join(directory, 'bad.csv')
    await writeFile(badPath, malformed)
    const cli = await ace('statements:import', badPath, `--account=${account.id}`)
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, bad.errors[0].message)
    const layout = await ace(
      'statements:import',
      badPath,
      `--account=${account.id}`,
      '--layout=csv'
    )
    assert.equal(layout.code, 1, layout.output)
    assert.include(layout.output, 'layout must be one of: neutral, kbank')
    const emptyPath = join(directory, 'empty.csv')
    await writeFile(emptyPath, 'date_time,direction,amount\n')
    const noAccount = await ace('statements:import', emptyPath, `--account=${account.id + 1000}`)
    assert.equal(noAccount.code, 1, noAccount.output)
    assert.include(noAccount.output, unknown.errors[0].message)

    assert.lengthOf(await db.from('statement_imports'), 0)
    assert.lengthOf(await db.from('statement_lines'), 0)
    assert.lengthOf(await db.from('audit_logs').where('action', 'statement.import'), 0)
  })

  test('import: the import row, its lines and its audit row commit together', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPaymentOrder(who, 'A1', '100.00')
    const content = neutral([
      [new Date(), 'credit', formatAmount(order.transferAmount)],
      [new Date(), 'credit', '5.00'],
    ])
    const input = { deposit_account_id: account.id, file_name: 'a.csv', content }

    // The audit row cannot be stored: the import row and the lines roll back with it.
    await assert.rejects(() => importStatement(input, UNAUDITABLE))
    assert.lengthOf(await db.from('statement_imports'), 0)
    assert.lengthOf(await db.from('statement_lines'), 0)
    assert.lengthOf(await db.from('audit_logs').where('action', 'statement.import'), 0)
    assert.equal((await order.refresh()).status, 'open')

    const summary = await importStatement(input, { name: 'cli:somchai', requestId: 'req-1' })
    assert.deepEqual(summary.results, { matched: 1, unmatched: 1, late: 0, skipped: 0 })
    const audit = await db.from('audit_logs').where('action', 'statement.import').firstOrFail()
    assert.equal(audit.actor, 'cli:somchai')
    assert.equal(audit.request_id, 'req-1')
    assert.equal(audit.subject_type, 'deposit_account')
    assert.equal(audit.subject_id, String(account.id))
    const details = audit.details
    assert.deepInclude(details, {
      import_id: summary.importId,
      file: 'a.csv',
      layout: 'neutral',
      lines: 2,
      new_lines: 2,
    })
    const imported = await db.from('statement_imports').where('id', summary.importId).firstOrFail()
    assert.equal(imported.actor, 'cli:somchai')
    assert.equal(imported.new_lines, 2)
    assert.equal(details.file_sha256, imported.file_sha256)

    // The same file again: an import with no new line, audited too.
    const again = await importStatement(input, { name: 'cli:somchai' })
    assert.equal(again.newLines, 0)
    assert.lengthOf(await db.from('audit_logs').where('action', 'statement.import'), 2)
  })

  test('sandbox:pay: audited with the stored line; field errors; the CLI shows the same message', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const order = await createPaymentOrder(who, 'SB2', '150.00')

    const invalid = await actionError(
      sandboxPay({ platform_order_id: '', amount: '1.234' }, { name: 'test' })
    )
    assert.deepEqual(invalid.errors, [
      { field: 'platform_order_id', message: 'platform_order_id is required' },
      {
        field: 'amount',
        message: 'amount must be a positive THB amount with at most 2 decimals (e.g. 20.00)',
      },
    ])
    const cli = await ace('sandbox:pay', order.platformOrderId, '--amount=1.234')
    assert.equal(cli.code, 1, cli.output)
    assert.include(cli.output, invalid.errors[1].message)
    await assert.rejects(() =>
      sandboxPay({ platform_order_id: order.platformOrderId }, UNAUDITABLE)
    )
    assert.lengthOf(await db.from('statement_lines'), 0)
    assert.lengthOf(await db.from('statement_imports'), 0)
    assert.lengthOf(await db.from('audit_logs').where('action', 'sandbox.pay'), 0)

    const paid = await ace('sandbox:pay', order.platformOrderId, '--json')
    assert.equal(paid.code, 0, paid.output)
    const output = lastJsonLine(paid.stdout)
    assert.equal(output.order_status, 'unsettled_paid')
    assert.deepEqual(output.summary.results, { matched: 1, unmatched: 0, late: 0, skipped: 0 })
    const audit = await db.from('audit_logs').where('action', 'sandbox.pay').firstOrFail()
    assert.match(audit.actor, /^cli:/)
    assert.equal(audit.subject_id, order.platformOrderId)
    assert.deepEqual(audit.details, {
      amount: order.transferAmount,
      trans_ref: output.transRef,
      import_id: output.summary.importId,
    })
  })

  test('settle:run: one audit row for the run before the orders settle, the operator on each timeline', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const orders = [
      await createPaymentOrder(who, 'S1', '100.00'),
      await createPaymentOrder(who, 'S2', '200.00'),
    ]
    await importFile(
      account,
      's.csv',
      neutral(orders.map((order) => [new Date(), 'credit', formatAmount(order.transferAmount)]))
    )

    const invalid = await actionError(settlePayments({ now: 'maybe' }, { name: 'test' }))
    assert.deepEqual(invalid.errors, [{ field: 'now', message: 'now must be on or off' }])
    await assert.rejects(() => settlePayments({ now: true }, UNAUDITABLE))
    assert.lengthOf(await PaymentOrder.query().where('status', 'settled_paid'), 0)

    // Not due yet without --now (30 minutes by default): nothing settled, nothing audited.
    const early = await ace('settle:run')
    assert.equal(early.code, 0, early.output)
    assert.include(early.output, 'Settled 0 payment order(s)')
    assert.lengthOf(await db.from('audit_logs').where('action', 'payments.settle_run'), 0)

    const run = await ace('settle:run', '--now')
    assert.equal(run.code, 0, run.output)
    assert.include(run.output, 'Settled 2 payment order(s)')
    const audits = await db.from('audit_logs').where('action', 'payments.settle_run')
    assert.lengthOf(audits, 1)
    assert.match(audits[0].actor, /^cli:/)
    assert.deepInclude(audits[0].details, { now: true, due: 2 })
    for (const order of orders) {
      assert.equal((await order.refresh()).status, 'settled_paid')
      const settled = (await orderTimeline('payment', order.id)).at(-1)!
      assert.equal(settled.toStatus, 'settled_paid')
      assert.equal(settled.actor, audits[0].actor)
    }
    assert.deepEqual(await balance(who), { balance: 300, freeze_balance: 0, unsettle_balance: 0 })
  })
})
