import { test } from '@japa/runner'
import { ace } from '#tests/helpers/ace'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import PayoutOrder from '#payouts/models/payout_order'
import { verifyLedger } from '#ledger/verify'
import { completePayout } from '#payouts/actions/complete_payout'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { orderTimeline } from '#core/order_events'
import { ActionError } from '#core/validation'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** Runs a real `node ace` process against the test database, as an operator would. */

/** The last stdout line of a --json command, parsed. */
function lastJson(result: { stdout: string }) {
  return JSON.parse(result.stdout.trim().split('\n').pop()!)
}

async function balanceOf(who: TestMerchant) {
  const response = await signedPost('/balance', who, authBody(who))
  if (response.status !== 200) throw new Error(response.text)
  return response.json.data
}

async function registeredAccounts(who: TestMerchant) {
  const rows = await db
    .from('merchant_settlement_accounts')
    .where('merchant_id', who.merchant.id)
    .orderBy('id')
  return rows.map((row) => `${row.bank}:${row.account_no}`)
}

test.group('payout operator commands', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('merchant:settlement-accounts edits the list that /thb-settlement/create enforces', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00, { settlementFeeFlat: 25_00 })
    const id = who.merchantId

    const empty = await ace('merchant:settlement-accounts', id)
    assert.equal(empty.code, 0, empty.output)
    assert.include(empty.stdout, `${id}: no settlement account ever registered`)

    const added = await ace(
      'merchant:settlement-accounts',
      id,
      '--add=KBANK:1234567890',
      '--add=SCB:1112223334'
    )
    assert.equal(added.code, 0, added.output)
    assert.include(added.stdout, `${id} settles only to: KBANK:1234567890, SCB:1112223334`)
    assert.deepEqual(await registeredAccounts(who), ['KBANK:1234567890', 'SCB:1112223334'])

    const removed = await ace('merchant:settlement-accounts', id, '--remove=SCB:1112223334')
    assert.equal(removed.code, 0, removed.output)
    assert.include(removed.stdout, `${id} settles only to: KBANK:1234567890`)
    assert.deepEqual(await registeredAccounts(who), ['KBANK:1234567890'])

    // Bad input: too few digits, unknown bank, no colon; unknown merchant.
    for (const entry of ['KBANK:12345', 'NOPE:1234567890', 'KBANK1234567890']) {
      const bad = await ace('merchant:settlement-accounts', id, `--add=${entry}`)
      assert.equal(bad.code, 1, `${entry}: ${bad.output}`)
      assert.include(bad.output, 'is not BANK:ACCOUNT_NO', entry)
    }
    const unknown = await ace('merchant:settlement-accounts', 'NOSUCH1', '--add=KBANK:1234567890')
    assert.equal(unknown.code, 1, unknown.output)
    assert.include(unknown.output, 'No merchant with merchant_id NOSUCH1')
    assert.deepEqual(await registeredAccounts(who), ['KBANK:1234567890'])

    const audits = await AuditLog.query()
      .where('subject_id', id)
      .where('action', 'merchant.settlement_accounts.edit')
      .orderBy('id')
    assert.deepEqual(
      audits.map((audit) => [audit.beforeValues, audit.afterValues]),
      [
        [
          { settlement_accounts: [] },
          { settlement_accounts: ['KBANK:1234567890', 'SCB:1112223334'] },
        ],
        [
          { settlement_accounts: ['KBANK:1234567890', 'SCB:1112223334'] },
          { settlement_accounts: ['KBANK:1234567890'] },
        ],
      ]
    )
    assert.isTrue(audits.every((audit) => audit.actor.startsWith('cli:')))

    // The removed account and any other one are refused, before any money moves.
    for (const [bank, accountNo] of [
      ['SCB', '1112223334'],
      ['KBANK', '9999999999'],
      ['BBL', '1234567890'],
    ]) {
      const refused = await signedPost(
        '/thb-settlement/create',
        who,
        authBody(who, {
          ...PAYOUT_FIELDS,
          merchant_order_id: `S${bank}${accountNo}`,
          amount: '500.00',
          bank,
          account_no: accountNo,
        })
      )
      assert.equal(refused.status, 400, refused.text)
      assert.equal(refused.json.error, 'invalid-inputs')
      assert.include(refused.json.message, `${bank} ${accountNo}`)
      assert.include(refused.json.message, 'registered settlement accounts')
    }
    assert.deepEqual(await balanceOf(who), {
      balance: 10000,
      freeze_balance: 0,
      unsettle_balance: 0,
    })

    // The registered account is accepted, also written with separators.
    for (const [orderId, accountNo] of [
      ['S1', '1234567890'],
      ['S2', '123-4-56789-0'],
    ]) {
      const ok = await signedPost(
        '/thb-settlement/create',
        who,
        authBody(who, {
          ...PAYOUT_FIELDS,
          merchant_order_id: orderId,
          amount: '500.00',
          bank: 'KBANK',
          account_no: accountNo,
        })
      )
      assert.equal(ok.status, 200, ok.text)
      assert.equal(ok.json.data.account_no, '1234567890')
      assert.equal(ok.json.data.fee, 25)
      assert.equal(ok.json.data.status, 'open')
    }
    assert.deepEqual(await balanceOf(who), {
      balance: 8950,
      freeze_balance: 1050,
      unsettle_balance: 0,
    })
  })

  test('payouts:export writes one CSV per bank, once, and the exported orders complete', async ({
    assert,
    cleanup,
  }) => {
    const directory = await mkdtemp(join(tmpdir(), 'gw-payouts-'))
    cleanup(() => rm(directory, { recursive: true, force: true }))

    const who = await createPayoutMerchant(10_000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 10_00,
    })
    const requests = [
      { amount: '1500.50', bank: 'KBANK', account_no: '1234567890', account_name: '=SUM(A1:A9)' },
      { amount: '250', bank: 'SCB', account_no: '1112223334', account_name: 'Doe, John' },
      { amount: 99.9, bank: 'KBANK', account_no: '5556667778', account_name: '+66 Somchai "Sam"' },
    ]
    const orders: PayoutOrder[] = []
    for (const [index, fields] of requests.entries()) {
      const response = await signedPost(
        '/withdraw/create',
        who,
        authBody(who, { merchant_order_id: `B${index + 1}`, ...fields })
      )
      assert.equal(response.status, 200, response.text)
      const order = await PayoutOrder.query()
        .where('platform_order_id', response.json.data.platform_order_id)
        .firstOrFail()
      assert.equal(order.connector, 'bulk_file')
      // The bulk-file connector leaves the order waiting for a file.
      assert.equal(await dispatchPayout(order.id), 'queued')
      await order.refresh()
      assert.equal(order.status, 'queue')
      orders.push(order)
    }
    const [first, second, third] = orders
    // Holds: 1510.50 + 260.00 + 109.90.
    assert.deepEqual(await balanceOf(who), {
      balance: 8119.6,
      freeze_balance: 1880.4,
      unsettle_balance: 0,
    })

    const invalid = await exportBulkFile({ directory: '', bank: 'NOPE' }, { name: 'test' }).catch(
      (error) => error
    )
    assert.instanceOf(invalid, ActionError)
    assert.deepEqual(invalid.errors, [
      { field: 'directory', message: 'directory is required' },
      {
        field: 'bank',
        message:
          'bank must be one of: BAAC, BAY, BBL, CIMB, CITI, GHB, GSB, KBANK, KK, KTB, LH, SC, SCB, SCIB, TISCO, TTB, UOB',
      },
    ])
    const unknownBank = await ace('payouts:export', `--out=${directory}`, '--bank=NOPE', '--json')
    assert.equal(unknownBank.code, 1, unknownBank.output)
    assert.include(unknownBank.output, invalid.errors[1].message)
    assert.deepEqual(await readdir(directory), [])

    // The batch's audit row cannot be stored (request_id is at most 128
    // characters): no order moves and no file is left behind.
    await assert.rejects(() =>
      exportBulkFile({ directory }, { name: 'test', requestId: 'r'.repeat(200) })
    )
    assert.deepEqual(await readdir(directory), [])
    for (const order of orders) {
      assert.equal((await order.refresh()).status, 'queue')
      assert.isNull(order.batchId)
    }
    assert.lengthOf(await AuditLog.query().where('action', 'payouts.export'), 0)

    const exported = await ace('payouts:export', `--out=${directory}`, '--json')
    assert.equal(exported.code, 0, exported.output)
    const result = lastJson(exported)
    assert.match(result.batchId, /^B\d{14}[A-Z0-9]{6}$/)
    assert.deepEqual(
      result.files.map((file: Record<string, unknown>) => ({ ...file })),
      [
        {
          bank: 'KBANK',
          path: join(directory, `${result.batchId}-KBANK.csv`),
          orders: 2,
          total: '1600.40',
        },
        {
          bank: 'SCB',
          path: join(directory, `${result.batchId}-SCB.csv`),
          orders: 1,
          total: '250.00',
        },
      ]
    )
    assert.sameMembers(await readdir(directory), [
      `${result.batchId}-KBANK.csv`,
      `${result.batchId}-SCB.csv`,
    ])

    const header = 'reference,bank_code,bank,account_no,account_name,amount'
    const kbank = await readFile(join(directory, `${result.batchId}-KBANK.csv`), 'utf8')
    assert.equal(
      kbank,
      [
        header,
        // A leading = or + would run as a formula in a spreadsheet: prefixed with '.
        `${first.platformOrderId},004,KBANK,1234567890,'=SUM(A1:A9),1500.50`,
        `${third.platformOrderId},004,KBANK,5556667778,"'+66 Somchai ""Sam""",99.90`,
        '',
      ].join('\r\n')
    )
    const scb = await readFile(join(directory, `${result.batchId}-SCB.csv`), 'utf8')
    assert.equal(
      scb,
      [header, `${second.platformOrderId},014,SCB,1112223334,"Doe, John",250.00`, ''].join('\r\n')
    )

    for (const order of orders) {
      await order.refresh()
      assert.equal(order.status, 'pending')
      assert.equal(order.batchId, result.batchId)
      assert.equal(order.connectorReference, order.platformOrderId)
      assert.equal(order.holdState, 'held')
    }
    const audit = await AuditLog.query().where('action', 'payouts.export').firstOrFail()
    assert.equal(audit.subjectType, 'payout_batch')
    assert.equal(audit.subjectId, result.batchId)
    assert.match(audit.actor, /^cli:/)
    assert.deepEqual(audit.details, {
      bank: null,
      orders: 3,
      files: [
        { file: `${result.batchId}-KBANK.csv`, bank: 'KBANK', orders: 2, total: '1600.40' },
        { file: `${result.batchId}-SCB.csv`, bank: 'SCB', orders: 1, total: '250.00' },
      ],
    })
    // Each order's timeline: exported by the operator.
    const exportedEvent = (await orderTimeline('withdraw', first.id)).at(-1)!
    assert.equal(exportedEvent.toStatus, 'pending')
    assert.equal(exportedEvent.actor, audit.actor)
    assert.equal(exportedEvent.reason, `bulk file ${result.batchId}-KBANK.csv`)

    // Exported orders are not exported again.
    const again = await ace('payouts:export', `--out=${directory}`, '--json')
    assert.equal(again.code, 0, again.output)
    assert.deepEqual(lastJson(again).files, [])
    assert.lengthOf(await readdir(directory), 2)
    assert.lengthOf(await AuditLog.query().where('action', 'payouts.export'), 1)

    // The bank statement confirms one line and fails another.
    assert.isTrue(await completePayout(first.id, { success: true }))
    assert.isTrue(await completePayout(second.id, { success: false, reason: 'account_closed' }))
    assert.deepEqual(await balanceOf(who), {
      balance: 8379.6,
      freeze_balance: 109.9,
      unsettle_balance: 0,
    })
    const query = await signedPost(
      '/withdraw/query',
      who,
      authBody(who, { platform_order_id: first.platformOrderId })
    )
    assert.equal(query.status, 200, query.text)
    assert.equal(query.json.data.status, 'success')
    assert.isString(query.json.data.done_datetime)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('merchant:configure --payout-route accepts only known connectors', async ({ assert }) => {
    const who = await createPayoutMerchant(1_000_00)

    const unknown = await ace('merchant:configure', who.merchantId, '--payout-route=nosuch')
    assert.equal(unknown.code, 1, unknown.output)
    assert.include(unknown.output, 'payout_route must be one of: sandbox, bulk_file')
    await who.merchant.refresh()
    assert.equal(who.merchant.payoutRoute, 'sandbox')

    const changed = await ace(
      'merchant:configure',
      who.merchantId,
      '--payout-route=bulk_file',
      '--json'
    )
    assert.equal(changed.code, 0, changed.output)
    assert.equal(lastJson(changed).payout_route, 'bulk_file')
    assert.deepEqual(lastJson(changed).changed, ['payout_route'])

    const cleared = await ace('merchant:configure', who.merchantId, '--no-payout-route', '--json')
    assert.equal(cleared.code, 0, cleared.output)
    assert.isNull(lastJson(cleared).payout_route)
    const response = await signedPost(
      '/withdraw/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, amount: '50.00' })
    )
    assert.equal(response.status, 404, response.text)
    assert.equal(response.json.error, 'not-found')
  })
})

test.group('ledger:verify and settlement accounts: edge cases', (group) => {
  group.each.setup(() => resetDatabase())

  test('a merchant whose balance row is gone is reported as drift', async ({ assert }) => {
    const who = await createPayoutMerchant(100_00)
    assert.deepEqual((await verifyLedger()).drifts, [])
    await db.from('merchant_balances').where('merchant_id', who.merchant.id).delete()
    const { drifts } = await verifyLedger()
    assert.lengthOf(drifts, 1)
    assert.include(drifts[0].detail, `merchant ${who.merchantId} has no balance row`)
  })

  test('removing a settlement account that is not registered is an error, not an audit entry', async ({
    assert,
  }) => {
    const { editSettlementAccounts } = await import('#merchants/actions/edit_settlement_accounts')
    const who = await createPayoutMerchant()
    await assert.rejects(
      () =>
        editSettlementAccounts(
          { merchant_id: who.merchantId, remove: ['KBANK:1234567890'] },
          { name: 'test' }
        ),
      /not a registered/
    )
    assert.lengthOf(
      await db.from('audit_logs').where('action', 'merchant.settlement_accounts.edit'),
      0
    )
  })
})
