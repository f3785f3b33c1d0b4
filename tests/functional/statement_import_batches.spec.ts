import { test } from '@japa/runner'
import { createHash } from 'node:crypto'
import { DateTime } from 'luxon'
import { v7 as uuidv7 } from 'uuid'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import { transitionPayment } from '#payments/payment_state'
import { importStatement } from '#reconciliation/actions/import_statement'
import { parseStatement } from '#reconciliation/layouts/index'
import { matchStatementLine } from '#reconciliation/matching/match'
import { statementBatching, storeStatement } from '#reconciliation/statements'
import { verifyLedger } from '#ledger/verify'
import { newPlatformOrderId } from '#core/order_ids'
import { formatAmount } from '#core/money'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'

const LINES = 2_500

function bangkok(at: DateTime) {
  return at.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
}

/**
 * Orders on `account` of merchant `who`, inserted as rows (K0…K34): open
 * orders K0–K29 (every fifth with a payment_reference), K30 frozen while
 * open, K31 expired two days ago, K32 open with a reference, K33 open but
 * created after the line that claims it, K34 open with a reference (paid by a
 * line an earlier, stopped import left in status new).
 */
async function seedOrders(who: TestMerchant, account: DepositAccount, now: DateTime) {
  const rows = []
  for (let k = 0; k <= 34; k++) {
    const amount = 100_00 + k * 100 + 1
    const expired = k === 31
    const orderAt = expired ? now.minus({ days: 2 }) : now.minus({ minutes: 10 })
    rows.push({
      platform_order_id: newPlatformOrderId(who.merchant.orderPrefix, 'P', now),
      uuid: uuidv7(),
      merchant_id: who.merchant.id,
      merchant_order_id: `K${k}`,
      payment_type: 'TRANSFER',
      channel: 'transfer',
      deposit_account_id: account.id,
      amount,
      transfer_amount: amount,
      slot_amount: expired ? null : amount,
      payment_reference: k % 5 === 0 || k === 32 || k === 34 ? `PAYREF${account.id}X${k}` : null,
      customer_bank: 'SCB',
      customer_account_name: 'Customer',
      customer_account_no: '1234567890',
      notify_url: 'https://merchant.example.test/cb',
      status: k === 30 ? 'freeze' : expired ? 'error' : 'open',
      status_before_freeze: k === 30 ? 'open' : null,
      error_reason: expired ? 'expired' : null,
      awaiting_review: false,
      order_at: orderAt.toJSDate(),
      expire_at: orderAt.plus({ hours: 1 }).toJSDate(),
      created_at: orderAt.toJSDate(),
      updated_at: orderAt.toJSDate(),
    })
  }
  await db.table('payment_orders').multiInsert(rows)
  const orders = await PaymentOrder.query().where('deposit_account_id', account.id)
  return new Map(orders.map((order) => [order.merchantOrderId, order]))
}

/**
 * A neutral file of 2,500 lines for `account`: lines no order holds (one
 * third debits), and among them, spread over the file so that they fall in
 * different batches, a line paying each of K0–K29 (by reference for those
 * that have one), the same transfer twice (K3 by amount, K0 by reference;
 * the second finds the order paid), a line for the frozen K30, a late
 * payment for K31, K32's reference with another amount, and a line a
 * quarter-hour before K33 existed.
 */
function statementFile(orders: Map<string, PaymentOrder>, now: DateTime) {
  const stamp = bangkok(now)
  const lines: string[] = []
  for (let index = 0; index < LINES; index++) {
    const direction = index % 3 === 0 ? 'debit' : 'credit'
    lines.push(
      `${stamp},${direction},"${formatAmount(5_000_00 + index * 100 + 99)}",,OTHER ${index}`
    )
  }
  const pay = (k: string, reference = true) => {
    const order = orders.get(k)!
    const ref = reference ? (order.paymentReference ?? '') : ''
    return `${stamp},credit,"${formatAmount(order.transferAmount)}",${ref},TRANSFER FROM SCB X7890`
  }
  for (let k = 0; k < 30; k++) lines[k * 83 + 5] = pay(`K${k}`)
  lines[2_480] = pay('K3') // the same transfer again, in another batch
  lines[2_490] = pay('K0')
  lines[1_003] = pay('K30', false)
  lines[1_502] = pay('K31', false)
  lines[299] = `${stamp},credit,"77.00",${orders.get('K32')!.paymentReference},TRANSFER`
  lines[300] = `${bangkok(now.minus({ minutes: 15 }))},credit,"${formatAmount(orders.get('K33')!.transferAmount)}",,EARLY`
  return ['date_time,direction,amount,reference,description', ...lines].join('\n')
}

/** A line an import stored before it stopped: status new, paying K34 by reference. */
async function leftoverLine(account: DepositAccount, orders: Map<string, PaymentOrder>) {
  const order = orders.get('K34')!
  const [importId] = await db.table('statement_imports').insert({
    deposit_account_id: account.id,
    layout: 'neutral',
    file_name: 'stopped.csv',
    file_sha256: '0'.repeat(64),
    line_count: 1,
    new_lines: 1,
    actor: 'test',
    created_at: new Date(),
  })
  await db.table('statement_lines').insert({
    deposit_account_id: account.id,
    import_id: importId,
    fingerprint: createHash('sha256').update(`stopped ${account.id}`).digest('hex'),
    line_at: new Date(),
    direction: 'credit',
    amount: order.transferAmount,
    reference: order.paymentReference,
    description: 'stored before the import stopped',
    status: 'new',
    created_at: new Date(),
  })
}

/** Each line of the account in id order: status, note and paid order in merchant terms. */
async function outcomes(account: DepositAccount, orders: Map<string, PaymentOrder>) {
  const byPlatformId = new Map([...orders.values()].map((o) => [o.platformOrderId, o]))
  const byId = new Map([...orders.values()].map((o) => [o.id, o]))
  const rows = await db
    .from('statement_lines')
    .where('deposit_account_id', account.id)
    .orderBy('id')
    .select('status', 'note', 'order_type', 'order_id')
  return rows.map((row) => ({
    status: row.status,
    note: (row.note ?? '').replace(
      /\b[A-Z0-9]{3}P\d{8}[A-Z0-9]{12}\b/g,
      (id: string) => byPlatformId.get(id)?.merchantOrderId ?? id
    ),
    order: row.order_id ? byId.get(Number(row.order_id))?.merchantOrderId : null,
  }))
}

test.group('statement import in batches', (group) => {
  const defaults = { ...statementBatching }
  group.each.setup(async () => {
    await resetDatabase()
    return () => {
      Object.assign(statementBatching, defaults)
    }
  })
  group.each.timeout(180_000)

  test('a file of several batches gives each line the verdict the line-by-line matcher gives', async ({
    assert,
  }) => {
    const now = DateTime.utc()
    const batched = { who: await createDepositMerchant(), account: await createDepositAccount() }
    const single = { who: await createDepositMerchant(), account: await createDepositAccount() }
    const batchedOrders = await seedOrders(batched.who, batched.account, now)
    const singleOrders = await seedOrders(single.who, single.account, now)
    await leftoverLine(batched.account, batchedOrders)
    await leftoverLine(single.account, singleOrders)

    // Line by line: stored, then each line matched in its own transaction, in id order.
    const singleFile = statementFile(singleOrders, now)
    const stored = await db.transaction((trx) =>
      storeStatement(trx, {
        account: single.account,
        layout: 'neutral',
        fileName: 'single.csv',
        fileSha256: '1'.repeat(64),
        lines: parseStatement('neutral', singleFile),
        actor: TEST_ACTOR,
      })
    )
    assert.equal(stored.lines, LINES)
    const lineByLine = { matched: 0, unmatched: 0, late: 0, skipped: 0 }
    const ids = await db
      .from('statement_lines')
      .where('deposit_account_id', single.account.id)
      .where('status', 'new')
      .orderByRaw('import_id = ? desc, id', [stored.importId])
      .select('id')
    for (const { id } of ids) lineByLine[await matchStatementLine(Number(id))]++

    // Batched: 300 lines per batch (9 batches), 7 lines per transaction.
    Object.assign(statementBatching, { lines: 300, linesPerTransaction: 7 })
    const file = statementFile(batchedOrders, now)
    const summary = await importStatement(
      { deposit_account_id: batched.account.id, file_name: 'batched.csv', content: file },
      TEST_ACTOR
    )
    assert.equal(summary.lines, LINES)
    assert.equal(summary.newLines, LINES)
    assert.deepEqual(summary.results, lineByLine)
    assert.deepEqual(summary.results, { matched: 31, unmatched: 2_469, late: 1, skipped: 0 })

    const got = await outcomes(batched.account, batchedOrders)
    assert.deepEqual(got, await outcomes(single.account, singleOrders))
    const byFileLine = got.slice(1) // the leftover line came first
    assert.deepEqual(got[0], { status: 'matched', note: '', order: 'K34' })
    assert.deepEqual(byFileLine[5], { status: 'matched', note: '', order: 'K0' })
    assert.deepEqual(byFileLine[2_480], { status: 'unmatched', note: 'no open order', order: null })
    assert.deepEqual(byFileLine[2_490], {
      status: 'unmatched',
      note: 'K0 is unsettled_paid',
      order: null,
    })
    assert.deepEqual(byFileLine[1_003], { status: 'unmatched', note: 'K30 is freeze', order: null })
    assert.deepEqual(byFileLine[1_502], { status: 'late', note: 'K31', order: null })
    assert.deepEqual(byFileLine[299], {
      status: 'unmatched',
      note: `K32 expects ${batchedOrders.get('K32')!.transferAmount} satang`,
      order: null,
    })
    assert.deepEqual(byFileLine[300], { status: 'unmatched', note: 'no open order', order: null })
    assert.deepEqual(byFileLine[0], {
      status: 'unmatched',
      note: 'debit without a payout reference',
      order: null,
    })

    // Each paid order: paid once, its posting, its event, its PAID row.
    const paid = await PaymentOrder.query()
      .where('deposit_account_id', batched.account.id)
      .where('status', 'unsettled_paid')
    assert.lengthOf(paid, 31)
    const paidIds = paid.map((order) => order.id)
    const postings = await db
      .from('ledger_transactions')
      .where('kind', 'payment_paid')
      .whereIn(
        'reference_id',
        paid.map((order) => order.platformOrderId)
      )
    assert.lengthOf(postings, 31)
    const events = await db
      .from('order_events')
      .where('order_type', 'payment')
      .whereIn('order_id', paidIds)
      .where('to_status', 'unsettled_paid')
    assert.lengthOf(events, 31)
    assert.isTrue(events.every((event) => /^statement line \d+$/.test(event.reason)))
    const outbox = await db
      .from('callback_outbox')
      .whereIn('order_id', paidIds)
      .where('status', 'PAID')
    assert.lengthOf(outbox, 31)
    assert.deepEqual((await verifyLedger()).drifts, [])

    // The same file again: nothing new, nothing changes.
    const again = await importStatement(
      { deposit_account_id: batched.account.id, file_name: 'batched.csv', content: file },
      TEST_ACTOR
    )
    assert.equal(again.newLines, 0)
    assert.deepEqual(again.results, { matched: 0, unmatched: 0, late: 0, skipped: 0 })
    assert.deepEqual(await outcomes(batched.account, batchedOrders), got)
  })

  test('an order paid or expired by another path between the batch read and its transaction is judged as it is then', async ({
    assert,
  }) => {
    const now = DateTime.utc()
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders = await seedOrders(who, account, now)
    const [paidElsewhere, expiredMeanwhile, open] = ['K1', 'K2', 'K4'].map((k) => orders.get(k)!)
    const stamp = bangkok(now)
    const file = [
      'date_time,direction,amount,reference,description',
      ...[paidElsewhere, expiredMeanwhile, open].map(
        (order) => `${stamp},credit,"${formatAmount(order.transferAmount)}",,TRANSFER`
      ),
      `${stamp},credit,"1.99",,OTHER`,
    ].join('\n')

    // Another path holds two of the orders locked, as a payment or an expiry does.
    const trx = await db.transaction()
    let importing: ReturnType<typeof importStatement> | undefined
    try {
      const locked = await PaymentOrder.query({ client: trx })
        .whereIn('id', [paidElsewhere.id, expiredMeanwhile.id])
        .orderBy('id')
        .forUpdate()
      importing = importStatement(
        { deposit_account_id: account.id, file_name: 'race.csv', content: file },
        TEST_ACTOR
      )
      // The import read its batch (the orders open) and now waits for their locks.
      const deadline = Date.now() + 20_000
      for (;;) {
        const waiting = await db
          .from('information_schema.PROCESSLIST')
          .where('INFO', 'like', '%slot_amount%for update%')
          .whereNot('ID', db.raw('CONNECTION_ID()'))
          .count('* as total')
        if (Number(waiting[0].total) > 0) break
        if (Date.now() > deadline) throw new Error('the import never waited for the orders')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      for (const order of locked) {
        await transitionPayment(
          trx,
          order,
          order.id === paidElsewhere.id
            ? {
                to: 'unsettled_paid',
                actor: TEST_ACTOR,
                reason: 'slip approved',
                receipt: { source: 'receivable', received: order.transferAmount },
              }
            : { to: 'error', actor: TEST_ACTOR, errorReason: 'expired' }
        )
      }
      await trx.commit()
    } catch (error) {
      if (!trx.isCompleted) await trx.rollback()
      await importing?.catch(() => {})
      throw error
    }
    const summary = await importing!

    assert.deepEqual(summary.results, { matched: 1, unmatched: 2, late: 1, skipped: 0 })
    const lines = await db
      .from('statement_lines')
      .where('import_id', summary.importId)
      .orderBy('id')
      .select('status', 'note', 'order_id')
    assert.deepEqual(
      lines.map((line) => [line.status, line.note, line.order_id && Number(line.order_id)]),
      [
        ['unmatched', 'no open order', null],
        ['late', expiredMeanwhile.platformOrderId, null],
        ['matched', null, open.id],
        ['unmatched', 'no open order', null],
      ]
    )
    // Paid once, by the other path: one posting, one event, one PAID row.
    await paidElsewhere.refresh()
    assert.equal(paidElsewhere.status, 'unsettled_paid')
    assert.lengthOf(
      await db
        .from('ledger_transactions')
        .where({ kind: 'payment_paid', reference_id: paidElsewhere.platformOrderId }),
      1
    )
    const events = await db
      .from('order_events')
      .where({ order_type: 'payment', order_id: paidElsewhere.id })
      .select('to_status', 'reason')
    assert.deepEqual(
      events.map((event) => [event.to_status, event.reason]),
      [['unsettled_paid', 'slip approved']]
    )
    assert.lengthOf(
      await db.from('callback_outbox').where({ order_id: paidElsewhere.id, status: 'PAID' }),
      1
    )
    assert.equal((await expiredMeanwhile.refresh()).status, 'error')
    assert.equal((await open.refresh()).status, 'unsettled_paid')
    assert.deepEqual((await verifyLedger()).drifts, [])
  })
})
