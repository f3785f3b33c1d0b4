import { test } from '@japa/runner'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import type PaymentOrder from '#payments/models/payment_order'
import { importStatement } from '#reconciliation/actions/import_statement'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { reverseReceivable } from '#reconciliation/actions/reverse_receivable'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { expirePayment } from '#payments/actions/expire_payment'
import { reviewSlip } from '#slips/actions/review_slip'
import { uploadSlip } from '#slips/actions/upload_slip'
import { insertClaim } from '#reconciliation/receipts'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { claimsCarryTransfers } from '#database/migrations/1763700000140_claims_carry_transfer'
import { readMerchantBalance } from '#ledger/ledger'
import { formatAmount } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'
import { SYSTEM, type Actor } from '#core/actor'
import { refusal } from '#tests/helpers/actions'
import { aceProcess } from '#tests/helpers/ace'
import { createPayment, operatorActor, removeSlipImages } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'
import { sandboxSlip, sandboxTransRef } from '#tests/helpers/slips'
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

  test('the same transaction reference on another of our accounts is the same transfer: that file is refused', async ({
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
    // Not this account's transfer: the file is refused, naming the account that has it.
    const elsewhere = await refusal(importFile(other, line))
    assert.match(
      elsewhere.message,
      new RegExp(`already on the statement of deposit account ${mine.id} `)
    )
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
      "Nothing imported: statement.csv, kbank: line 3: the bank's balance 11,750.00 THB does not follow line 2 " +
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
      /^Nothing imported: statement\.csv, kbank: line 2: the file opens at 11,540\.40 THB, where this account's statements closed at 10,740\.40 THB on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: a statement between them is missing, or the file is another account's$/
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
      new RegExp(
        `the credit of 500\\.00 THB \\(bank reference THEIRS1\\) is already on the statement of deposit account ${theirs.id} `
      )
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

  test('a file written newest first with several lines in its last minute: the next file continues from the last of them', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ hours: 3 }).startOf('minute')
    // One minute, three transfers: stored newest first, so the last one has the smallest id.
    const sameMinute: Array<[DateTime, number, string]> = [
      [at, 100_00, '1,100.00'],
      [at, 100_00, '1,200.00'],
      [at, -50_00, '1,150.00'],
    ]
    assert.equal((await importFile(account, kbank([...sameMinute].reverse()), 'kbank')).newLines, 3)
    const next: Array<[DateTime, number, string]> = [[at.plus({ minutes: 1 }), 25_00, '1,175.00']]
    assert.equal((await importFile(account, kbank(next), 'kbank')).newLines, 1)
    // A file that does not continue the last of them is still refused.
    const gap: Array<[DateTime, number, string]> = [[at.plus({ minutes: 2 }), 25_00, '1,300.00']]
    const error = await refusal(importFile(account, kbank(gap), 'kbank'))
    assert.match(
      error.message,
      /opens at 1,275\.00 THB, where this account's statements closed at 1,175\.00 THB/
    )
  })
})

/**
 * A transfer is claimed once across all our accounts: every claim carries
 * the bank's reference of the transfer it took (its line's, or its
 * slip's), so a line on one account and a slip approved for an order of
 * another cannot both credit it.
 */
test.group('one bank transfer, claimed once across accounts', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipImages)

  const APPROVE = { decision: 'approve', reason_code: 'slip_verified', comment: 'slip checked' }
  const CREDIT = { reason_code: 'merchant_claimed', comment: 'the merchant shows the transfer' }

  /** Two merchants, each drawing from a deposit account of its own. */
  async function twoAccounts() {
    const first = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const one = await createDepositAccount()
    const second = await createDepositMerchant({
      paymentFeeRateBps: 150,
      depositGroup: 'second-group',
    })
    const two = await createDepositAccount({ depositGroup: 'second-group' })
    return { first, one, second, two, alice: (await operatorActor('alice@example.com')).actor }
  }

  /** One credit carrying the bank's transaction reference, imported into `account`. */
  async function importTransfer(account: DepositAccount, amount: number, transRef: string) {
    const imported = await importFile(
      account,
      'date_time,direction,amount,reference,description,trans_ref\n' +
        `${bangkok(DateTime.utc().minus({ seconds: 20 }))},credit,${formatAmount(amount)},,TRANSFER FROM SCB X7890,${transRef}\n`
    )
    const line = await db
      .from('statement_lines')
      .where('import_id', imported.importId)
      .firstOrFail()
    return { ...line, id: Number(line.id) }
  }

  /** The customer's slip of transfer `transRef`, uploaded on the payment page of `order`. */
  async function slipOf(order: PaymentOrder, transRef: string) {
    const { slip } = await uploadSlip({
      order,
      image: await sandboxSlip({ transRef, amount: order.transferAmount }),
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    return slip
  }

  async function approveSlip(slipId: number, actor: Actor) {
    return reviewSlip({ slip_id: slipId, ...APPROVE }, actor)
  }

  test('a transfer matched on one account, its slip approved for an order of another: refused, naming the match', async ({
    assert,
  }) => {
    const { first, one, second, two, alice } = await twoAccounts()
    const paid = await createPayment(first, '1234.00')
    const other = await createPayment(second, '1234.00')
    assert.equal(other.depositAccountId, two.id)
    const transRef = sandboxTransRef()
    const line = await importTransfer(one, paid.transferAmount, transRef)
    assert.equal(line.status, 'matched')
    const claim = await db.from('receipt_claims').firstOrFail()
    // The match carries the transfer it took.
    assert.equal(claim.trans_ref, transRef)
    const before = [await held(first), await held(second)]

    // The same transfer's slip (its mini-QR), uploaded for the other account's order.
    const slip = await slipOf(other, transRef)
    const refused = await refusal(approveSlip(slip.id, alice))
    assert.equal(
      refused.message,
      `the transfer ${transRef} of slip ${slip.id} was already claimed: matched automatically to ` +
        `${paid.platformOrderId} at ${formatGatewayDateTime(claim.claimed_at)}, statement line #${line.id}`
    )
    assert.deepEqual([await held(first), await held(second)], before)
    assert.equal((await other.refresh()).status, 'open')
    assert.lengthOf(await db.from('receipt_claims'), 1)
  })

  test('a slip approved on one account before its line, the line credited to a merchant on another: refused, naming the approval', async ({
    assert,
  }) => {
    const { first, one, second, alice } = await twoAccounts()
    const order = await createPayment(second, '1234.00')
    const transRef = sandboxTransRef()
    const slip = await slipOf(order, transRef)
    const approved = await approveSlip(slip.id, alice)
    assert.equal(approved.decision === 'approve' && approved.outcome, 'paid')
    const receivable = await db.from('receipt_claims').firstOrFail()
    assert.isNull(receivable.statement_line_id)
    const before = [await held(first), await held(second)]

    // The transfer's line, on the first account's statement: no order of that account is its.
    const line = await importTransfer(one, order.transferAmount, transRef)
    assert.equal(line.status, 'unmatched')
    assert.equal(
      line.note,
      `the transfer ${transRef} was already claimed (claim ${receivable.id}, slip_approval of ${order.platformOrderId})`
    )
    const refused = await refusal(
      creditMerchantFromLine(
        { statement_line_id: line.id, merchant_id: first.merchantId, ...CREDIT },
        alice
      )
    )
    assert.equal(
      refused.message,
      `the transfer ${transRef} of statement line #${line.id} was already claimed: slip ${slip.id} of ` +
        `${order.platformOrderId} approved by operator:alice@example.com at ` +
        `${formatGatewayDateTime(receivable.claimed_at)}, its bank line not yet received`
    )
    assert.deepEqual([await held(first), await held(second)], before)
    assert.lengthOf(await db.from('receipt_claims'), 1)

    // Taken back (the slip's word was wrong), the receivable no longer holds the transfer.
    await reverseReceivable(
      { platform_order_id: order.platformOrderId, reason_code: 'other', comment: 'wrong account' },
      alice
    )
    const credited = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: first.merchantId, ...CREDIT },
      alice
    )
    assert.equal(credited.outcome, 'credited')
    const claim = await db.from('receipt_claims').where('statement_line_id', line.id).firstOrFail()
    assert.equal(claim.trans_ref, transRef)
  })

  test("a line naming an open order, whose transfer another account's slip was approved for: left for an operator, not paid twice", async ({
    assert,
  }) => {
    const { first, one, second, alice } = await twoAccounts()
    const slipOrder = await createPayment(second, '700.00')
    const transRef = sandboxTransRef()
    await approveSlip((await slipOf(slipOrder, transRef)).id, alice)
    const open = await createPayment(first, '700.00')
    const before = [await held(first), await held(second)]

    const line = await importTransfer(one, open.transferAmount, transRef)
    assert.equal(line.status, 'unmatched')
    assert.match(line.note, new RegExp(`^the transfer ${transRef} was already claimed`))
    assert.equal((await open.refresh()).status, 'open')
    assert.deepEqual([await held(first), await held(second)], before)
  })

  test("a receivable cleared by its line takes the line's transfer: a slip of it elsewhere is refused", async ({
    assert,
  }) => {
    const { first, one, second, alice } = await twoAccounts()
    const order = await createPayment(first, '900.00')
    // Marked paid without a slip: a receivable naming no transfer.
    await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'phoned',
      },
      alice
    )
    const transRef = sandboxTransRef()
    const line = await importTransfer(one, order.transferAmount, transRef)
    assert.equal(line.status, 'matched')
    const claim = await db.from('receipt_claims').firstOrFail()
    assert.equal(Number(claim.statement_line_id), line.id)
    assert.equal(claim.trans_ref, transRef)

    const elsewhere = await createPayment(second, '900.00')
    const slip = await slipOf(elsewhere, transRef)
    const refused = await refusal(approveSlip(slip.id, alice))
    assert.match(
      refused.message,
      new RegExp(
        `^the transfer ${transRef} of slip ${slip.id} was already claimed: ${order.platformOrderId} marked paid by operator:alice@example.com`
      )
    )
    assert.equal((await elsewhere.refresh()).status, 'open')
  })

  test('the key holds whatever the checks: a claim on a line whose transfer another claim holds fails on it', async ({
    assert,
  }) => {
    const { one, second, alice } = await twoAccounts()
    const order = await createPayment(second, '450.00')
    const transRef = sandboxTransRef()
    const slip = await slipOf(order, transRef)
    await approveSlip(slip.id, alice)
    const line = await importTransfer(one, order.transferAmount, transRef)

    const refused = await refusal(
      db.transaction((trx) =>
        insertClaim(trx, {
          depositAccountId: one.id,
          statementLineId: line.id,
          path: 'merchant_credit',
          actor: SYSTEM,
          expectedAmount: line.amount,
        })
      )
    )
    assert.match(
      refused.message,
      new RegExp(
        `^the transfer ${transRef} was already claimed: slip ${slip.id} of ${order.platformOrderId} approved`
      )
    )
    assert.lengthOf(await db.from('receipt_claims'), 1)
  })

  test('a slip naming another transfer than the line it would take: refused, naming both', async ({
    assert,
  }) => {
    const { first, one, alice } = await twoAccounts()
    const order = await createPayment(first, '640.00')
    const lineRef = sandboxTransRef()
    // The bank's line names the order (its reference) and its own transfer.
    const imported = await importFile(
      one,
      'date_time,direction,amount,reference,description,trans_ref\n' +
        `${bangkok(DateTime.utc().minus({ seconds: 20 }))},credit,${formatAmount(order.transferAmount + 100)},${order.platformOrderId},TRANSFER,${lineRef}\n`
    )
    const line = await db
      .from('statement_lines')
      .where('import_id', imported.importId)
      .firstOrFail()
    assert.equal(line.status, 'unmatched')
    const slipRef = sandboxTransRef()
    const slip = await slipOf(order, slipRef)

    const refused = await refusal(
      reviewSlip({ slip_id: slip.id, ...APPROVE, amount_policy: 'credit_received' }, alice)
    )
    assert.equal(
      refused.message,
      `slip ${slip.id} names the transfer ${slipRef}, but statement line #${line.id} is the transfer ${lineRef}: ` +
        "the slip is not this line's, nothing was credited"
    )
    assert.equal(await held(first), 0)
    assert.lengthOf(await db.from('receipt_claims'), 0)
  })
})

test.group('upgrading: claims carry their transfer', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipImages)

  const WHY = { reason_code: 'other', comment: 'decided before the upgrade' }

  test('legacy late credits of lines left unmatched become claims; claims on lines get their transfer, one transfer claimed twice is reported', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    const other = await createDepositAccount({ depositGroup: 'second-group' })
    const second = await createDepositMerchant({ depositGroup: 'second-group' })
    const alice = (await operatorActor('alice@example.com')).actor

    // The version before 101: a line attached late to an expired order
    // stayed unmatched, and two lines could be credited late to one order.
    const expired = await createPayment(who, '300.00')
    await expirePayment(expired.id, DateTime.utc().plus({ days: 1 }))
    const lateLines = []
    for (let count = 0; count < 2; count++) {
      const line = await receiveLine(account.id, { amount: expired.transferAmount })
      await db
        .from('statement_lines')
        .where('id', line.id)
        .update({ status: 'unmatched', note: null })
      await attachStatementLine(
        { statement_line_id: line.id, platform_order_id: expired.platformOrderId, ...WHY },
        alice
      )
      await db.from('receipt_claims').where('statement_line_id', line.id).delete()
      lateLines.push(line)
    }
    let report = await verifyReconciliation()
    assert.includeMembers(
      report.problems.map((problem) => problem.kind),
      ['unbacked_credit', 'line_given_unclaimed', 'clearing_drift']
    )

    // Claims written before this version carried no line's transfer.
    const matched = await createPayment(who, '150.00')
    const matchedRef = sandboxTransRef()
    const matchedLine = await receiveLine(account.id, {
      amount: matched.transferAmount,
      transRef: matchedRef,
    })
    await db
      .from('receipt_claims')
      .where('statement_line_id', matchedLine.id)
      .update({ trans_ref: null })
    // One transfer credited twice: its line credited here, its slip approved on another account.
    const twiceRef = sandboxTransRef()
    const twiceLine = await receiveLine(account.id, { amount: 55_500, transRef: twiceRef })
    await creditMerchantFromLine(
      {
        statement_line_id: twiceLine.id,
        merchant_id: who.merchantId,
        reason_code: 'merchant_claimed',
        comment: 'theirs',
      },
      alice
    )
    await db
      .from('receipt_claims')
      .where('statement_line_id', twiceLine.id)
      .update({ trans_ref: null })
    const slipOrder = await createPayment(second, '555.00')
    assert.equal(slipOrder.depositAccountId, other.id)
    const { slip } = await uploadSlip({
      order: slipOrder,
      image: await sandboxSlip({ transRef: twiceRef, amount: slipOrder.transferAmount }),
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    await reviewSlip(
      { slip_id: slip.id, decision: 'approve', reason_code: 'slip_verified', comment: 'ok' },
      alice
    )
    const balances = await db.from('merchant_balances').orderBy('merchant_id')

    const warnings = await claimsCarryTransfers(db.connection())
    assert.deepEqual(await claimsCarryTransfers(db.connection()), warnings, 'idempotent')

    const late = await db
      .from('receipt_claims')
      .whereIn(
        'statement_line_id',
        lateLines.map((line) => line.id)
      )
      .orderBy('statement_line_id')
    assert.deepEqual(
      late.map((claim) => [
        claim.path,
        claim.payment_order_id === null ? null : Number(claim.payment_order_id),
      ]),
      [
        ['late_credit', expired.id],
        ['upgrade', null],
      ]
    )
    const claimOf = (lineId: number) =>
      db.from('receipt_claims').where('statement_line_id', lineId).firstOrFail()
    assert.equal((await claimOf(matchedLine.id)).trans_ref, matchedRef)
    const twice = await claimOf(twiceLine.id)
    assert.isNull(twice.trans_ref)
    const approval = await db.from('receipt_claims').where('trans_ref', twiceRef).firstOrFail()
    assert.deepEqual(warnings, [
      `claim ${approval.id} (a receivable) and claim ${twice.id} (statement line #${twiceLine.id}) are one transfer ${twiceRef}, credited twice: claim ${approval.id} (a receivable) keeps it; check how the other was decided`,
    ])
    // Nothing a merchant holds changed; what no action could clear is gone.
    assert.deepEqual(await db.from('merchant_balances').orderBy('merchant_id'), balances)
    report = await verifyReconciliation()
    assert.notIncludeMembers(
      report.problems.map((problem) => problem.kind),
      ['unbacked_credit', 'line_given_unclaimed', 'clearing_drift']
    )
  })
})
