import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import MerchantCredential from '#merchants/models/merchant_credential'
import { importStatement } from '#reconciliation/actions/import_statement'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { hashToken } from '#merchants/credentials'
import { createMerchant } from '#merchants/actions/create_merchant'
import { epochSeconds } from '#core/clock'
import { ace } from '#tests/helpers/ace'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  createTestMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * Spec: merchant_id, token and the order ids are compared exactly. The
 * database's default collations ignore case, so identifier columns carry a
 * binary one (migration 1763700000014).
 */

/** Every letter in the other case: 'aB1' → 'Ab1'. */
function swapCase(value: string) {
  const swapped = [...value]
    .map((char) => (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()))
    .join('')
  if (swapped === value) throw new Error(`${value} has no letter to change`)
  return swapped
}

const ORDER_FIELDS = {
  bank: 'SCB',
  account_name: 'Customer',
  account_no: '1234567890',
}

function createPayment(who: TestMerchant, merchantOrderId: string, amount = '100.00') {
  return signedPost(
    '/payment/create',
    who,
    authBody(who, { ...ORDER_FIELDS, merchant_order_id: merchantOrderId, amount })
  )
}

function createSettlement(who: TestMerchant, merchantOrderId: string, amount = '1000.00') {
  return signedPost(
    '/thb-settlement/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: merchantOrderId, amount })
  )
}

test.group('identifiers compare byte for byte', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('a merchant_id in another case is 403 authentication-failed', async ({ assert }) => {
    const who = await createTestMerchant()
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
    const body = JSON.stringify({
      merchant_id: swapCase(who.merchantId),
      token: who.token,
      time: epochSeconds(),
    })
    assertError(assert, await signedPost('/balance', who, body), 403, 'authentication-failed')
  })

  test('a token differing only in case fails; no credential has its hash in another case', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const body = JSON.stringify({
      merchant_id: who.merchantId,
      token: swapCase(who.token),
      time: epochSeconds(),
    })
    assertError(assert, await signedPost('/balance', who, body), 403, 'authentication-failed')
    const hash = hashToken(who.token)
    assert.isNotNull(await MerchantCredential.findBy('token_hash', hash))
    assert.isNull(await MerchantCredential.findBy('token_hash', hash.toUpperCase()))
  })

  test('merchant_order_ids abc1 and ABC1 are two payments and two settlements', async ({
    assert,
  }) => {
    const payer = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const payments = [await createPayment(payer, 'abc1'), await createPayment(payer, 'ABC1')]
    for (const response of payments) assert.equal(response.status, 200, response.text)
    assert.deepEqual(
      payments.map((response) => response.json.data.merchant_order_id),
      ['abc1', 'ABC1']
    )
    assert.notEqual(
      payments[0].json.data.platform_order_id,
      payments[1].json.data.platform_order_id
    )
    const stored = await PaymentOrder.query().where('merchant_id', payer.merchant.id).orderBy('id')
    assert.deepEqual(
      stored.map((order) => order.merchantOrderId),
      ['abc1', 'ABC1']
    )
    // The exact same id is still a duplicate (another amount: not a replay of the first request).
    assertError(
      assert,
      await createPayment(payer, 'abc1', '101.00'),
      409,
      'duplicate-entry',
      /merchant_order_id abc1 /
    )

    const settler = await createPayoutMerchant(10000_00)
    const settlements = [
      await createSettlement(settler, 'abc1'),
      await createSettlement(settler, 'ABC1'),
    ]
    for (const response of settlements) assert.equal(response.status, 200, response.text)
    assert.deepEqual(
      settlements.map((response) => response.json.data.merchant_order_id),
      ['abc1', 'ABC1']
    )
    assertError(
      assert,
      await createSettlement(settler, 'ABC1', '1001.00'),
      409,
      'duplicate-entry',
      /merchant_order_id ABC1 /
    )
  })

  test('a platform_order_id in another case names no order', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const created = await createPayment(who, 'Q1')
    const id: string = created.json.data.platform_order_id
    const query = (platformOrderId: string) =>
      signedPost('/payment/query', who, authBody(who, { platform_order_id: platformOrderId }))

    assert.equal((await query(id)).status, 200)
    // Issued ids are upper-case, so the API refuses another case as malformed
    // before any lookup (payment_query.spec.ts).
    assertError(assert, await query(id.toLowerCase()), 400, 'invalid-inputs')
    // Operator commands and the matching of statement lines look ids up as given.
    assert.isNull(await PaymentOrder.findBy('platform_order_id', id.toLowerCase()))

    const settler = await createPayoutMerchant(10000_00)
    const settlement: string = (await createSettlement(settler, 'S1')).json.data.platform_order_id
    assert.isNotNull(await PayoutOrder.findBy('platform_order_id', settlement))
    assert.isNull(await PayoutOrder.findBy('platform_order_id', settlement.toLowerCase()))
  })

  test('a statement line reference in another case does not match; parsed files are upper-cased first', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({
      channel: 'qr',
      promptpayId: null,
      billerId: '010555012345678',
    })
    const created = await createPayment(who, 'R1')
    const order = await PaymentOrder.findByOrFail(
      'platform_order_id',
      created.json.data.platform_order_id
    )
    // A bill-payment order is matched by its reference only (it holds no amount slot).
    assert.isNull(order.slotAmount)
    const line = (reference: string) => ({
      lineNumber: 1,
      lineAt: new Date(),
      direction: 'credit' as const,
      amount: order.transferAmount,
      reference,
      description: 'BILL PAYMENT',
    })

    // Stored as parsed (as the sandbox bank stores its lines): no upper-casing.
    const { importId } = await db.transaction((trx) =>
      storeStatement(trx, {
        account,
        layout: 'sandbox',
        fileName: 'other-case',
        fileSha256: '0'.repeat(64),
        lines: [line(swapCase(order.paymentReference!))],
        actor: { name: 'test' },
      })
    )
    const other = await matchImport(account.id, importId)
    assert.deepEqual(other, { matched: 0, unmatched: 1, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'open')

    // Statement files: the neutral reference column is upper-cased (docs/reconciliation.md).
    const file = [
      'date_time,direction,amount,reference,description',
      `${order.orderAt.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')},credit,100.00,${order.paymentReference!.toLowerCase()},BILL PAYMENT`,
    ].join('\n')
    const parsed = await importStatement(
      { deposit_account_id: account.id, file_name: 'stmt.csv', content: file },
      { name: 'test' }
    )
    assert.deepEqual(parsed.results, { matched: 1, unmatched: 0, late: 0, skipped: 0 })
    assert.equal((await order.refresh()).status, 'unsettled_paid')
  })

  test('operator commands: a merchant_id or platform_order_id in another case is not found', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const created = await createPayment(who, 'C1')
    const id: string = created.json.data.platform_order_id

    const configure = await ace('merchant:configure', swapCase(who.merchantId), '--json')
    assert.equal(configure.code, 1, configure.output)
    assert.include(configure.output, `No merchant with merchant_id ${swapCase(who.merchantId)}`)

    const rotate = await ace('merchant:rotate', swapCase(who.merchantId), '--json')
    assert.equal(rotate.code, 1, rotate.output)
    assert.include(rotate.output, 'No merchant with merchant_id')
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)

    const pay = await ace('sandbox:pay', id.toLowerCase())
    assert.equal(pay.code, 1, pay.output)
    assert.include(pay.output, `No payment order ${id.toLowerCase()}`)
    const order = await PaymentOrder.findByOrFail('platform_order_id', id)
    assert.equal(order.status, 'open')
    assert.lengthOf(await db.from('statement_lines'), 0)
  })
})

test.group('identifiers: new merchants', (group) => {
  group.each.setup(() => resetDatabase())

  test('a merchant_id that differs only in case from an existing one is refused', async ({
    assert,
  }) => {
    await createTestMerchant()
    const first = await createMerchant(
      { platform: 'test', name: 'Shop', merchant_id: 'Shop1' },
      TEST_ACTOR
    )
    await assert.rejects(
      () => createMerchant({ platform: 'test', name: 'Other', merchant_id: 'SHOP1' }, TEST_ACTOR),
      /differs only in case from Shop1/
    )
    await assert.rejects(
      () => createMerchant({ platform: 'test', name: 'Again', merchant_id: 'Shop1' }, TEST_ACTOR),
      /merchant_id Shop1 is taken/
    )
    assert.equal(first.merchant.merchantId, 'Shop1')
  })
})
