import { createHash } from 'node:crypto'
import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { statementBatching } from '#reconciliation/statements'
import { verifyLedger } from '#ledger/verify'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { formatAmount } from '#core/money'
import { gatewayDay } from '#core/clock'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  createPaymentOrder,
} from '#tests/helpers/merchants'

const HEADER = 'date_time,direction,amount,reference,description'
const stamp = (at: DateTime) => at.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
const paying = (order: PaymentOrder, description = 'TRANSFER') =>
  `${stamp(DateTime.utc())},credit,"${formatAmount(order.transferAmount)}",,${description}`

function importFile(account: DepositAccount, lines: string[], actor = 'test') {
  return importStatement(
    {
      deposit_account_id: account.id,
      file_name: 'settle.csv',
      content: [HEADER, ...lines].join('\n'),
    },
    { name: actor }
  )
}

const count = async (query: any) => Number((await query.count('* as total'))[0].total)

/** The bank_statement postings of an import, by value date: what its lines say came in (credits less debits). */
async function bankPostings(importId: number) {
  const rows = await db
    .from('ledger_transactions as t')
    .join('ledger_entries as e', 'e.transaction_id', 't.id')
    .join('ledger_accounts as a', 'a.id', 'e.account_id')
    .where('t.kind', 'bank_statement')
    .where('t.reference_id', String(importId))
    .where('a.code', 'like', 'bank:%')
    .select(db.raw("DATE_FORMAT(t.value_date, '%Y-%m-%d') as day"), 'e.amount')
  // The bank account's leg is what left it: debits less credits.
  return Object.fromEntries(rows.map((row) => [row.day, -Number(row.amount)])) as Record<
    string,
    number
  >
}

test.group('statement import: many paying lines settled in turn', (group) => {
  const defaults = { ...statementBatching }
  group.each.setup(async () => {
    await resetDatabase()
    return () => {
      Object.assign(statementBatching, defaults)
    }
  })
  group.each.timeout(120_000)

  test('small transactions two at a time: each order paid once by the earliest line that can pay it, the ledger balanced', async ({
    assert,
  }) => {
    // Transactions of 4 lines, the next one beginning while the one before pays.
    Object.assign(statementBatching, { lines: 7, linesPerTransaction: 4 })
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders: PaymentOrder[] = []
    for (let i = 0; i < 25; i++)
      orders.push(await createPaymentOrder(who, `T${i}`, `${300 + i}.00`))

    // Lines no order holds on two earlier bank days, either side of a midnight (GMT+7), a debit among them.
    const lateNight = DateTime.now()
      .setZone('Asia/Bangkok')
      .startOf('day')
      .minus({ days: 1, minutes: 1 })
    const earlyMorning = lateNight.plus({ minutes: 2 })
    const noise = [
      ...Array.from(
        { length: 10 },
        (_, k) =>
          `${stamp(lateNight)},credit,"${formatAmount(9_000_99 + k * 100)}",,LATE NIGHT ${k}`
      ),
      `${stamp(lateNight)},debit,"${formatAmount(5_000_00)}",,FEE`,
      ...Array.from(
        { length: 10 },
        (_, k) => `${stamp(earlyMorning)},credit,"${formatAmount(8_000_99 + k * 100)}",,EARLY ${k}`
      ),
    ]
    // Two orders' amounts paid a second time: the fourth's by a line of the next
    // transaction (the two in flight at once), the first's far later in the file.
    const lines = [
      ...orders.slice(0, 5).map((order) => paying(order)),
      paying(orders[3], 'TRANSFER AGAIN'),
      ...orders.slice(5).map((order) => paying(order)),
      ...noise,
      paying(orders[0], 'TRANSFER AGAIN'),
    ]
    const summary = await importFile(account, lines)

    assert.equal(summary.newLines, lines.length)
    assert.deepEqual(summary.results, { matched: 25, unmatched: 23, late: 0, skipped: 0 })
    const ids = orders.map((order) => order.id)
    assert.equal(
      await count(db.from('payment_orders').whereIn('id', ids).where('status', 'unsettled_paid')),
      25
    )
    assert.equal(
      await count(
        db
          .from('ledger_transactions')
          .where('kind', 'payment_paid')
          .whereIn(
            'reference_id',
            orders.map((order) => order.platformOrderId)
          )
      ),
      25
    )
    assert.equal(
      await count(db.from('callback_outbox').whereIn('order_id', ids).where('status', 'PAID')),
      25
    )
    assert.equal(
      await count(
        db
          .from('order_events')
          .where('order_type', 'payment')
          .whereIn('order_id', ids)
          .where('to_status', 'unsettled_paid')
      ),
      25
    )
    assert.equal(await count(db.from('receipt_claims').whereIn('payment_order_id', ids)), 25)

    // The earlier of the two lines of an order's amount paid it; the later found it paid.
    for (const order of [orders[0], orders[3]]) {
      const twice = await db
        .from('statement_lines')
        .where('amount', order.transferAmount)
        .orderBy('id')
        .select('status', 'order_id', 'description')
      assert.deepEqual(
        twice.map((line) => [
          line.description,
          line.status,
          line.order_id && Number(line.order_id),
        ]),
        [
          ['TRANSFER', 'matched', order.id],
          ['TRANSFER AGAIN', 'unmatched', null],
        ]
      )
    }

    // The bank postings: one per bank day of the file, what its lines moved.
    const credits = (from: number, length: number) =>
      Array.from({ length }, (_, k) => from + k * 100).reduce((sum, amount) => sum + amount, 0)
    const paid = orders.reduce((sum, order) => sum + order.transferAmount, 0)
    assert.deepEqual(await bankPostings(summary.importId), {
      [gatewayDay(lateNight.toJSDate())]: credits(9_000_99, 10) - 5_000_00,
      [gatewayDay(earlyMorning.toJSDate())]: credits(8_000_99, 10),
      [gatewayDay(new Date())]: paid + orders[0].transferAmount + orders[3].transferAmount,
    })
    const importRow = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(importRow.line_count, lines.length)
    assert.equal(importRow.new_lines, lines.length)
    assert.deepEqual((await verifyLedger()).drifts, [])
    const problems = (await verifyReconciliation()).problems.filter(
      (problem) => problem.kind === 'bank_day_drift'
    )
    assert.deepEqual(problems, [])
  })

  test('a file partly imported before: only its new lines are counted, judged and posted', async ({
    assert,
  }) => {
    Object.assign(statementBatching, { lines: 5, linesPerTransaction: 3 })
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders: PaymentOrder[] = []
    for (let i = 0; i < 8; i++) orders.push(await createPaymentOrder(who, `P${i}`, `${400 + i}.00`))
    const earlier = DateTime.now().minus({ hours: 1 })
    const noise = Array.from(
      { length: 6 },
      (_, k) => `${stamp(earlier)},credit,"${formatAmount(7_000_99 + k * 100)}",,N${k}`
    )
    const first = await importFile(account, [...orders.slice(0, 4).map((o) => paying(o)), ...noise])
    assert.deepEqual(first.results, { matched: 4, unmatched: 6, late: 0, skipped: 0 })

    // The same file again: nothing new, nothing posted, nothing judged.
    const again = await importFile(account, [...orders.slice(0, 4).map((o) => paying(o)), ...noise])
    assert.equal(again.newLines, 0)
    assert.deepEqual(again.results, { matched: 0, unmatched: 0, late: 0, skipped: 0 })
    assert.deepEqual(await bankPostings(again.importId), {})

    // A longer export of the same account: its first ten lines are known.
    const more = Array.from(
      { length: 3 },
      (_, k) => `${stamp(earlier)},credit,"${formatAmount(6_000_99 + k * 100)}",,M${k}`
    )
    const longer = await importFile(account, [
      ...orders.slice(0, 4).map((o) => paying(o)),
      ...noise,
      ...orders.slice(4).map((o) => paying(o)),
      ...more,
    ])
    assert.equal(longer.newLines, 7)
    assert.deepEqual(longer.results, { matched: 4, unmatched: 3, late: 0, skipped: 0 })
    const newMoney =
      orders.slice(4).reduce((sum, order) => sum + order.transferAmount, 0) +
      [0, 1, 2].reduce((sum, k) => sum + 6_000_99 + k * 100, 0)
    const posted = Object.values(await bankPostings(longer.importId)).reduce(
      (sum, amount) => sum + amount,
      0
    )
    assert.equal(posted, newMoney)
    assert.equal(
      await count(db.from('payment_orders').where('status', 'unsettled_paid')),
      orders.length
    )
    assert.deepEqual((await verifyLedger()).drifts, [])
    const problems = (await verifyReconciliation()).problems.filter(
      (problem) => problem.kind === 'bank_day_drift'
    )
    assert.deepEqual(problems, [])
  })

  test("a line's text is stored as the file has it: quotes, backslashes, question marks, Thai", async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const description = `O'Brien "paid" C:\\path\\n ? ?? 50% ทดสอบ 😀`
    const at = DateTime.now().minus({ minutes: 30 }).startOf('minute')
    const csvText = `"${description.replaceAll('"', '""')}"`
    const summary = await importFile(account, [
      `${stamp(at)},credit,"1,234.56",REF?1,${csvText}`,
      `${stamp(at)},debit,"0.01",,\\`,
    ])
    assert.equal(summary.newLines, 2)
    const stored = await db
      .from('statement_lines')
      .where('import_id', summary.importId)
      .orderBy('id')
      .select('description', 'reference', 'amount', 'line_at', 'fingerprint')
    assert.deepEqual(
      stored.map((line) => [line.description, line.reference, Number(line.amount)]),
      [
        [description, 'REF?1', 123456],
        ['\\', null, 1],
      ]
    )
    assert.equal(new Date(stored[0].line_at).getTime(), at.toMillis())
    // The fingerprint of a line never changes: a file imported again adds nothing.
    const lineKey = [at.toJSDate().toISOString(), 'credit', 123456, 'REF?1', description].join('|')
    assert.equal(
      stored[0].fingerprint,
      createHash('sha256').update(`${account.id}|${lineKey}|1`).digest('hex')
    )
  })
})
