import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import { transitionPayment } from '#payments/payment_state'
import { importStatement } from '#reconciliation/actions/import_statement'
import { statementBatching } from '#reconciliation/statements'
import { paymentPaidPosting } from '#ledger/recipes'
import { postLedgerTransactions } from '#ledger/ledger'
import { DuplicatePostingError } from '#ledger/errors'
import { verifyLedger } from '#ledger/verify'
import { formatAmount } from '#core/money'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
  createPaymentOrder,
} from '#tests/helpers/merchants'

/** A neutral file paying these orders now, by amount, with `noise` lines no order holds. */
function file(orders: PaymentOrder[], noise = 0) {
  const stamp = DateTime.utc().setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
  const lines = orders.map(
    (order) => `${stamp},credit,"${formatAmount(order.transferAmount)}",,TRANSFER`
  )
  for (let k = 0; k < noise; k++)
    lines.push(`${stamp},credit,"${formatAmount(7_000_99 + k * 100)}",,N${k}`)
  return ['date_time,direction,amount,reference,description', ...lines].join('\n')
}

function importFile(account: DepositAccount, content: string, actor = 'test') {
  return importStatement(
    { deposit_account_id: account.id, file_name: 'bulk.csv', content },
    { name: actor }
  )
}

/** An order's payment_paid entries as "owner:code" → satang. */
async function paidEntries(order: PaymentOrder) {
  const rows = await db
    .from('ledger_transactions')
    .join('ledger_entries', 'ledger_entries.transaction_id', 'ledger_transactions.id')
    .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
    .where('ledger_transactions.kind', 'payment_paid')
    .where('ledger_transactions.reference_id', order.platformOrderId)
    .select('ledger_accounts.owner', 'ledger_accounts.code', 'ledger_entries.amount')
  return Object.fromEntries(rows.map((row) => [`${row.owner}:${row.code}`, Number(row.amount)]))
}

function expectedEntries(order: PaymentOrder, feeRateBps: number) {
  const { posting } = paymentPaidPosting(order, feeRateBps)
  return Object.fromEntries(
    posting.legs.map((leg) =>
      'merchantId' in leg
        ? [`${leg.merchantId}:${leg.account}`, leg.amount]
        : 'bank' in leg
          ? [`gateway:bank:${leg.bank}`, leg.amount]
          : [`gateway:${leg.gateway}`, leg.amount]
    )
  )
}

/** Every paid order of these: one posting, one event, one PAID callback row, its slot free. */
async function assertPaidOnce(assert: any, orders: PaymentOrder[]) {
  const ids = orders.map((order) => order.id)
  const refs = orders.map((order) => order.platformOrderId)
  const count = async (query: any) => Number((await query.count('* as total'))[0].total)
  assert.equal(
    await count(db.from('payment_orders').whereIn('id', ids).where('status', 'unsettled_paid')),
    orders.length
  )
  assert.equal(
    await count(
      db.from('ledger_transactions').where('kind', 'payment_paid').whereIn('reference_id', refs)
    ),
    orders.length
  )
  assert.equal(
    await count(
      db
        .from('order_events')
        .where('order_type', 'payment')
        .whereIn('order_id', ids)
        .where('to_status', 'unsettled_paid')
    ),
    orders.length
  )
  assert.equal(
    await count(db.from('callback_outbox').whereIn('order_id', ids).where('status', 'PAID')),
    orders.length
  )
  assert.equal(
    await count(db.from('statement_lines').whereIn('order_id', ids).where('status', 'matched')),
    orders.length
  )
  assert.deepEqual((await verifyLedger()).drifts, [])
}

test.group('statement import: orders paid in bulk', (group) => {
  const defaults = { ...statementBatching }
  group.each.setup(async () => {
    await resetDatabase()
    return () => {
      Object.assign(statementBatching, defaults)
    }
  })
  group.each.timeout(120_000)

  test('an order paid by a batch gets what transitionPayment gives one: posting, fee, slot, event, callback', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const single = await createPaymentOrder(who, 'S1', '123.45')
    const bulk = await createPaymentOrder(who, 'B1', '123.45')
    const rate = who.merchant.paymentFeeRateBps

    await db.transaction(async (trx) => {
      const order = await PaymentOrder.query({ client: trx })
        .where('id', single.id)
        .forUpdate()
        .firstOrFail()
      await transitionPayment(trx, order, {
        to: 'unsettled_paid',
        actor: TEST_ACTOR,
        reason: 'x',
        receipt: { source: 'clearing', received: order.transferAmount },
      })
    })
    const summary = await importFile(account, file([bulk]))
    assert.equal(summary.results.matched, 1)

    for (const order of [single, bulk]) {
      assert.deepEqual(await paidEntries(order), expectedEntries(order, rate))
    }
    await single.refresh()
    await bulk.refresh()
    assert.equal(bulk.status, 'unsettled_paid')
    assert.equal(bulk.fee, single.fee)
    assert.isNull(bulk.slotAmount)
    assert.isFalse(bulk.awaitingReview)
    assert.isNotNull(bulk.paidAt)
    const slots = await db
      .from('deposit_slots')
      .where('deposit_account_id', account.id)
      .whereIn('slot_amount', [single.transferAmount, bulk.transferAmount])
      .select('held')
    assert.isTrue(slots.every((slot) => !slot.held))
    const [event] = await db
      .from('order_events')
      .where({ order_type: 'payment', order_id: bulk.id, to_status: 'unsettled_paid' })
    assert.equal(event.from_status, 'open')
    assert.equal(event.actor, 'system')
    const bodies = await db
      .from('callback_outbox')
      .whereIn('order_id', [single.id, bulk.id])
      .orderBy('order_id')
    assert.deepEqual(
      bodies.map((row) => {
        const body = JSON.parse(row.body)
        return {
          merchant_id: body.merchant_id,
          mode: body.mode,
          amount: body.amount,
          status: body.status,
        }
      }),
      [single, bulk].map(() => ({
        merchant_id: who.merchant.merchantId,
        mode: 'PAYMENT',
        amount: 123.45,
        status: 'PAID',
      }))
    )
    await assertPaidOnce(assert, [bulk])
  })

  test('one order of a batch paid meanwhile by another path: every other order of the batch paid once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders: PaymentOrder[] = []
    for (let i = 0; i < 12; i++)
      orders.push(await createPaymentOrder(who, `M${i}`, `${100 + i}.00`))
    const [elsewhere, ...others] = orders

    // Paid by another path while the import has read the batch: it waits for the lock.
    const trx = await db.transaction()
    let importing: ReturnType<typeof importFile> | undefined
    try {
      const locked = await PaymentOrder.query({ client: trx })
        .where('id', elsewhere.id)
        .forUpdate()
        .firstOrFail()
      importing = importFile(account, file(orders, 30))
      const deadline = Date.now() + 20_000
      for (;;) {
        const waiting = await db
          .from('information_schema.PROCESSLIST')
          .where('INFO', 'like', '%slot_amount%for update%')
          .whereNot('ID', db.raw('CONNECTION_ID()'))
          .count('* as total')
        if (Number(waiting[0].total) > 0) break
        if (Date.now() > deadline) throw new Error('the import never waited for the order')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await transitionPayment(trx, locked, {
        to: 'unsettled_paid',
        actor: TEST_ACTOR,
        reason: 'slip approved',
        receipt: { source: 'receivable', received: locked.transferAmount },
      })
      await trx.commit()
    } catch (error) {
      if (!trx.isCompleted) await trx.rollback()
      await importing?.catch(() => {})
      throw error
    }
    const summary = await importing!
    assert.deepEqual(summary.results, { matched: 11, unmatched: 31, late: 0, skipped: 0 })
    await assertPaidOnce(assert, others)
    assert.equal(
      Number(
        (
          await db
            .from('ledger_transactions')
            .where('reference_id', elsewhere.platformOrderId)
            .count('* as total')
        )[0].total
      ),
      1
    )
    const total = orders.reduce((sum, order) => sum + order.amount, 0)
    const fees = (
      await PaymentOrder.query().whereIn(
        'id',
        orders.map((order) => order.id)
      )
    ).reduce((sum, order) => sum + (order.fee ?? 0), 0)
    const balance = await db.from('merchant_balances').where('merchant_id', who.merchant.id).first()
    assert.equal(Number(balance.unsettle_balance), total - fees)
  })

  test('two imports of overlapping files at once, in small batches: each order credited once', async ({
    assert,
  }) => {
    Object.assign(statementBatching, { lines: 7, linesPerTransaction: 4 })
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders: PaymentOrder[] = []
    for (let i = 0; i < 30; i++)
      orders.push(await createPaymentOrder(who, `C${i}`, `${200 + i}.00`))
    const results = await Promise.all([
      importFile(account, file(orders.slice(0, 20), 10), 'a'),
      importFile(account, file(orders.slice(10), 10), 'b'),
      importFile(account, file(orders.slice(0, 20), 10), 'c'),
    ])
    assert.equal(
      results.reduce((sum, result) => sum + result.results.matched, 0),
      30
    )
    // The 10 lines no order holds are in all three files: stored, and judged, once.
    assert.equal(
      results.reduce((sum, result) => sum + result.results.unmatched, 0),
      10
    )
    assert.equal(
      results.reduce((sum, result) => sum + result.newLines, 0),
      40
    )
    await assertPaidOnce(assert, orders)
    const total = orders.reduce((sum, order) => sum + order.amount, 0)
    const fees = (
      await PaymentOrder.query().whereIn(
        'id',
        orders.map((order) => order.id)
      )
    ).reduce((sum, order) => sum + (order.fee ?? 0), 0)
    const balance = await db.from('merchant_balances').where('merchant_id', who.merchant.id).first()
    assert.equal(Number(balance.unsettle_balance), total - fees)
  })

  test('postLedgerTransactions: a key already posted writes nothing of the batch', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const legs = (amount: number) => [
      { gateway: 'deposit_clearing' as const, amount: -amount },
      { merchantId: who.merchant.id, account: 'unsettled' as const, amount },
    ]
    await db.transaction((trx) =>
      postLedgerTransactions(trx, [
        { kind: 'test_bulk', reference: { type: 't', id: '1' }, legs: legs(100) },
      ])
    )
    await assert.rejects(
      () =>
        db.transaction((trx) =>
          postLedgerTransactions(trx, [
            { kind: 'test_bulk', reference: { type: 't', id: '2' }, legs: legs(200) },
            { kind: 'test_bulk', reference: { type: 't', id: '1' }, legs: legs(300) },
          ])
        ),
      DuplicatePostingError
    )
    assert.lengthOf(await db.from('ledger_transactions').where('kind', 'test_bulk'), 1)
    const balance = await db.from('merchant_balances').where('merchant_id', who.merchant.id).first()
    assert.equal(Number(balance.unsettle_balance), 100)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })
})
