import { test } from '@japa/runner'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { readMerchantBalance } from '#ledger/ledger'
import { formatAmount } from '#core/money'
import { refusal } from '#tests/helpers/actions'
import { aceProcess } from '#tests/helpers/ace'
import { createPayment, operatorActor } from '#tests/helpers/decisions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * One bank transfer is one statement line, however its statement is
 * exported: the line is known by what the bank says of it (its transaction
 * reference, or its running balance), not by our parsing of the file.
 */

function importFile(account: DepositAccount, content: string, layout = 'neutral') {
  return importStatement(
    { deposit_account_id: account.id, layout, file_name: 'statement.csv', content },
    { name: 'test' }
  )
}

/** GMT+7 wall-clock time of an instant, with or without its seconds. */
function bangkok(at: DateTime, format = 'yyyy-LL-dd HH:mm:ss') {
  return at.setZone('UTC+7').toFormat(format)
}

async function held(who: TestMerchant) {
  const balance = await readMerchantBalance(who.merchant.id)
  return balance.balance + balance.unsettleBalance
}

test.group('one bank transfer, one statement line', (group) => {
  group.each.setup(() => resetDatabase())

  test('a re-exported transfer (same transaction reference, another description, minutes only) adds nothing and credits nothing twice', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '1700.00')
    const at = DateTime.utc().minus({ seconds: 30 })
    const amount = formatAmount(order.transferAmount)

    const first = await importFile(
      account,
      'date_time,direction,amount,reference,description,trans_ref\n' +
        `${bangkok(at)},credit,${amount},,TRANSFER FROM SCB X1234,202612062049AB01\n`
    )
    assert.deepInclude(first, { lines: 1, newLines: 1 })
    assert.equal(first.results.matched, 1)
    const credited = await held(who)
    assert.isAbove(credited, 0)

    // The bank's second export of the same transfer: other words, no seconds.
    const again = await importFile(
      account,
      'date_time,direction,amount,reference,description,trans_ref\n' +
        `${bangkok(at, 'yyyy-LL-dd HH:mm')},credit,${amount},,SCB X1234 SOMCHAI J,202612062049ab01\n`
    )
    assert.deepInclude(again, { lines: 1, newLines: 0 })
    assert.deepEqual(again.results, { matched: 0, unmatched: 0, late: 0, skipped: 0 })
    const lines = await db.from('statement_lines')
    assert.lengthOf(lines, 1)
    assert.equal(lines[0].transfer_key, 'ref|credit|202612062049AB01')
    // No second line, so nothing an operator could credit a second time.
    assert.equal(await held(who), credited)
  })

  test('the same transaction reference on another of our accounts is the same transfer', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const mine = await createDepositAccount({ channel: 'transfer' })
    const other = await createDepositAccount({ channel: 'transfer' })
    const alice = (await operatorActor('alice@example.com')).actor
    const line =
      'date_time,direction,amount,reference,description,trans_ref\n' +
      `${bangkok(DateTime.utc().minus({ minutes: 1 }))},credit,1234.00,,TRANSFER,TX777\n`
    assert.equal((await importFile(mine, line)).newLines, 1)
    assert.equal((await importFile(other, line)).newLines, 0)
    const [stored] = await db.from('statement_lines')
    assert.equal(Number(stored.deposit_account_id), mine.id)

    // Credited once from its one line; there is no other line to credit.
    await creditMerchantFromLine(
      {
        statement_line_id: Number(stored.id),
        merchant_id: who.merchantId,
        reason_code: 'merchant_claimed',
        comment: 'the merchant shows the transfer',
      },
      alice
    )
    assert.lengthOf(await db.from('statement_lines'), 1)
    const second = await refusal(
      creditMerchantFromLine(
        {
          statement_line_id: Number(stored.id),
          merchant_id: who.merchantId,
          reason_code: 'merchant_claimed',
          comment: 'again',
        },
        alice
      )
    )
    assert.match(second.message, /already/)
  })

  test('with running balances: a re-export is recognised, and two transfers of one amount in one minute stay two', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const day = DateTime.utc().minus({ minutes: 5 }).setZone('UTC+7')
    const date = day.toFormat('dd-LL-yy')
    const time = day.toFormat('HH:mm')
    const kbank = (description: string) =>
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details\n' +
      `${date},${time},${description},,500.00,"10,500.00",K PLUS,FROM SCB X1111\n` +
      `${date},${time},${description},,500.00,"11,000.00",K PLUS,FROM SCB X2222\n`

    const first = await importFile(account, kbank('Transfer Deposit'), 'kbank')
    assert.deepInclude(first, { lines: 2, newLines: 2 })
    const again = await importFile(account, kbank('TRANSFER IN'), 'kbank')
    assert.deepInclude(again, { lines: 2, newLines: 0 })

    const lines = await db.from('statement_lines').orderBy('id')
    assert.deepEqual(
      lines.map((line) => Number(line.balance_after)),
      [1_050_000, 1_100_000]
    )
    assert.notEqual(lines[0].transfer_key, lines[1].transfer_key)
  })

  test('two payments naming one order without a bank reference are two transfers', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const order = await createPayment(who, '300.00')
    const at = DateTime.utc().minus({ minutes: 2 })
    const summary = await importFile(
      account,
      'date_time,direction,amount,reference,description\n' +
        `${bangkok(at)},credit,${formatAmount(order.transferAmount)},${order.platformOrderId},TRANSFER\n` +
        `${bangkok(at.plus({ seconds: 40 }))},credit,${formatAmount(order.transferAmount)},${order.platformOrderId},TRANSFER\n`
    )
    // The order's reference is ours, not the bank's: both lines are kept.
    assert.deepInclude(summary, { lines: 2, newLines: 2 })
    assert.equal(summary.results.matched, 1)
    const lines = await db.from('statement_lines')
    assert.deepEqual(
      lines.map((line) => line.transfer_key),
      [null, null]
    )
  })

  test('two overlapping exports imported at once from two processes: each transfer stored and paid once', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const orders = [
      await createPayment(who, '410.00'),
      await createPayment(who, '420.00'),
      await createPayment(who, '430.00'),
    ]
    // In the orders' slots (from their creation): the lines pay them.
    const at = DateTime.utc().minus({ seconds: 10 })
    const line = (index: number, description: string) =>
      `${bangkok(at.plus({ seconds: index * 10 }))},credit,` +
      `${formatAmount(orders[index].transferAmount)},,${description},TXOVERLAP${index}`
    const header = 'date_time,direction,amount,reference,description,trans_ref'
    const dir = await mkdtemp(join(tmpdir(), 'overlap-'))
    try {
      // The first export ends with the second transfer; the next one, worded
      // otherwise, starts with it.
      const first = join(dir, 'first.csv')
      const second = join(dir, 'second.csv')
      await writeFile(first, [header, line(0, 'TRANSFER'), line(1, 'TRANSFER')].join('\n'))
      await writeFile(second, [header, line(1, 'PROMPTPAY IN'), line(2, 'PROMPTPAY IN')].join('\n'))
      const results = await Promise.all(
        [first, second].map((file) =>
          aceProcess('statements:import', file, `--account=${account.id}`, '--json')
        )
      )
      for (const result of results) assert.equal(result.code, 0, result.output)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    assert.lengthOf(await db.from('statement_lines'), 3)
    for (const order of orders) assert.equal((await order.refresh()).status, 'unsettled_paid')
    assert.lengthOf(await db.from('callback_outbox').where('status', 'PAID'), 3)
    assert.lengthOf(await db.from('receipt_claims'), 3)
  })
})

test.group('statements are continuous', (group) => {
  group.each.setup(() => resetDatabase())

  /** A KBank export of these (time, deposit or −withdrawal, printed balance) lines, oldest first. */
  function kbank(lines: Array<[DateTime, number, string]>) {
    return [
      'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
      ...lines.map(([at, amount, balance]) => {
        const local = at.setZone('UTC+7')
        const value = `"${formatAmount(Math.abs(amount))}"`
        return [
          local.toFormat('dd-LL-yy'),
          local.toFormat('HH:mm'),
          amount > 0 ? 'Transfer Deposit' : 'Transfer Withdrawal',
          amount > 0 ? '' : value,
          amount > 0 ? value : '',
          `"${balance}"`,
          'K PLUS',
          '',
        ].join(',')
      }),
    ].join('\n')
  }

  async function storedLines() {
    return (await db.from('statement_lines')).length
  }

  test('a line missing inside a file breaks its balances: nothing is imported, the line is named', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ hours: 2 })
    // 10,000.00 + 500.00 = 10,500.00; the 1,000.00 line that made 11,500.00 is not in the file.
    const file = kbank([
      [at, 500_00, '10,500.00'],
      [at.plus({ minutes: 5 }), 250_00, '11,750.00'],
    ])
    const error = await refusal(importFile(account, file, 'kbank'))
    assert.equal(
      error.errors[0].message,
      "Nothing imported: line 3: the bank's balance 11,750.00 THB does not follow line 2 " +
        '(10,500.00 THB + 250.00 = 10,750.00 THB): a line is missing or was changed'
    )
    assert.equal(await storedLines(), 0)
  })

  test('a file opening where the last one did not close is refused, in both layouts; the next one in line is imported', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ hours: 3 })
    const first = await importFile(
      account,
      kbank([
        [at, 500_00, '10,240.40'],
        [at.plus({ minutes: 1 }), 500_00, '10,740.40'],
      ]),
      'kbank'
    )
    assert.equal(first.newLines, 2)

    // Opens at 11,740.40 − 200.00 = 11,540.40, not at 10,740.40: a statement is missing between them.
    const gap = await refusal(
      importFile(account, kbank([[at.plus({ minutes: 30 }), 200_00, '11,740.40']]), 'kbank')
    )
    assert.match(
      gap.errors[0].message,
      /^Nothing imported: line 2: the file opens at 11,540\.40 THB, where this account's statements closed at 10,740\.40 THB on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: a statement between them is missing, or the file is another account's$/
    )
    const neutral = await refusal(
      importFile(
        account,
        'date_time,direction,amount,reference,description,trans_ref,balance\n' +
          `${bangkok(at.plus({ minutes: 31 }))},credit,200.00,,TRANSFER,,"11,740.40"\n`
      )
    )
    assert.match(neutral.errors[0].message, /the file opens at 11,540\.40 THB/)
    assert.equal(await storedLines(), 2)

    // The statement that follows: 10,740.40 − 40.40 + 200.00.
    const next = await importFile(
      account,
      kbank([
        [at.plus({ minutes: 40 }), -40_40, '10,700.00'],
        [at.plus({ minutes: 41 }), 200_00, '10,900.00'],
      ]),
      'kbank'
    )
    assert.equal(next.newLines, 2)
  })

  test("another account's export that starts with a transfer known there is refused here", async ({
    assert,
  }) => {
    await createDepositMerchant()
    const mine = await createDepositAccount({ channel: 'transfer' })
    const theirs = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ hours: 2 })
    const neutral = (lines: Array<[DateTime, string, string, string]>) =>
      [
        'date_time,direction,amount,reference,description,trans_ref,balance',
        ...lines.map(
          ([time, amount, ref, balance]) =>
            `${bangkok(time)},credit,${amount},,TRANSFER,${ref},"${balance}"`
        ),
      ].join('\n')
    assert.equal(
      (await importFile(mine, neutral([[at, '100.00', 'MINE1', '1,100.00']]))).newLines,
      1
    )
    assert.equal(
      (await importFile(theirs, neutral([[at, '500.00', 'THEIRS1', '5,500.00']]))).newLines,
      1
    )

    // Their next export, imported into my account: its first transfer is theirs.
    const error = await refusal(
      importFile(
        mine,
        neutral([
          [at, '500.00', 'THEIRS1', '5,500.00'],
          [at.plus({ minutes: 5 }), '200.00', 'THEIRS2', '5,700.00'],
        ])
      )
    )
    assert.match(
      error.errors[0].message,
      /the file opens at 5,000\.00 THB, where this account's statements closed at 1,100\.00 THB/
    )
    assert.lengthOf(await db.from('statement_lines').where('deposit_account_id', mine.id), 1)
  })

  test('an export overlapping the last one, or written newest first, continues it', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ hours: 3 })
    const lines: Array<[DateTime, number, string]> = [
      [at, 100_00, '1,100.00'],
      [at.plus({ minutes: 1 }), 100_00, '1,200.00'],
      [at.plus({ minutes: 2 }), -50_00, '1,150.00'],
      [at.plus({ minutes: 3 }), 25_00, '1,175.00'],
    ]
    assert.equal((await importFile(account, kbank(lines.slice(0, 2)), 'kbank')).newLines, 2)
    // Starts with a line already imported, then goes on.
    assert.equal((await importFile(account, kbank(lines.slice(1, 3)), 'kbank')).newLines, 1)
    // Newest first, as some exports are.
    const reversed = kbank(lines.slice(2).reverse())
    assert.equal((await importFile(account, reversed, 'kbank')).newLines, 1)
    assert.equal(await storedLines(), 4)
  })
})
