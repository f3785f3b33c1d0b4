import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import PayoutOrder from '#payouts/models/payout_order'
import { recordPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { importStatement } from '#reconciliation/actions/import_statement'
import { postLedgerTransaction } from '#ledger/ledger'
import { paymentPaidPosting, receivableClearedPosting } from '#ledger/recipes'
import { verifyReconciliation, type ProblemKind } from '#reconciliation/verify/index'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount, formatThb } from '#core/money'
import { ace } from '#tests/helpers/ace'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { createPayment, operatorActor } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'

/**
 * reconcile:verify turns red on what the gateway itself never writes: each
 * case is written straight into the database, around the actions and their
 * constraints, and the command must name it and exit 1.
 */

async function verified() {
  const result = await ace('reconcile:verify')
  return { code: result.code, output: result.output }
}

/** A payment paid by its line, as the matcher pays it. */
async function paidPayment() {
  const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
  const account = await createDepositAccount()
  const order = await createPayment(who, '120.00')
  const line = await receiveLine(account.id, { amount: order.transferAmount })
  return { who, account, order, line }
}

test.group('reconcile:verify against a database written around the gateway', (group) => {
  group.each.setup(() => resetDatabase())

  test('green on what the actions wrote', async ({ assert }) => {
    await paidPayment()
    const result = await verified()
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, 'Ledger reconciled with the bank')
    // A person ran it: audited as a run from the back-office is.
    const audits = await db.from('audit_logs').where('action', 'reconciliation.check')
    assert.lengthOf(audits, 1)
    assert.match(audits[0].actor, /^cli:/)
  })

  test('a receipt claimed twice (its unique key dropped to write it) is named, exit 1', async ({
    assert,
  }) => {
    const { line, who } = await paidPayment()
    // The foreign key keeps an index of its own meanwhile.
    await db.rawQuery(
      `ALTER TABLE receipt_claims ADD INDEX claims_line_plain (statement_line_id),
         DROP INDEX receipt_claims_statement_line_id_unique`
    )
    try {
      await db.table('receipt_claims').insert({
        deposit_account_id: line.deposit_account_id,
        statement_line_id: line.id,
        merchant_id: who.merchant.id,
        path: 'merchant_credit',
        expected_amount: line.amount,
        received_amount: line.amount,
        credited: line.amount,
        fee: 0,
        actor: 'straight into the database',
        claimed_at: new Date(),
        cleared_at: new Date(),
      })
      const report = await verifyReconciliation()
      assert.include(
        report.problems.map((problem) => problem.kind),
        'receipt_claimed_twice'
      )
      const result = await verified()
      assert.equal(result.code, 1)
      assert.include(result.output, `statement line #${line.id} is claimed 2 times`)
    } finally {
      await db.from('receipt_claims').where('actor', 'straight into the database').delete()
      await db.rawQuery(
        `ALTER TABLE receipt_claims
           ADD UNIQUE INDEX receipt_claims_statement_line_id_unique (statement_line_id),
           DROP INDEX claims_line_plain`
      )
    }
  })

  test('a claim crediting more than its line brought is named, exit 1', async ({ assert }) => {
    const { line } = await paidPayment()
    // 1.00 THB more than the transfer, fee included.
    await db
      .from('receipt_claims')
      .where('statement_line_id', line.id)
      .update({ credited: db.raw('received_amount - fee + 100') })
    const problems = (await verifyReconciliation()).problems
    const excess = problems.filter((problem) => problem.kind === 'claim_exceeds_receipt')
    assert.lengthOf(excess, 1)
    assert.match(
      excess[0].detail,
      new RegExp(
        `^claim \\d+ credits [\\d,.]+ THB \\+ [\\d,.]+ THB fee from statement line #${line.id}, which brought 120\\.\\d\\d THB$`
      )
    )
    const result = await verified()
    assert.equal(result.code, 1, result.output)
    assert.include(result.output, 'claim_exceeds_receipt')
  })

  test('a merchant credited without a receipt is named, exit 1', async ({ assert }) => {
    const { order, who } = await paidPayment()
    const other = await createPayment(who, '77.00')
    await db.transaction((trx) =>
      postLedgerTransaction(trx, paymentPaidPosting(other, 100).posting)
    )
    const result = await verified()
    assert.equal(result.code, 1)
    assert.include(result.output, `unbacked_credit: ledger transaction`)
    assert.include(
      result.output,
      `(payment_paid, payment ${other.platformOrderId}) credits a merchant without a bank receipt`
    )
    assert.notInclude(result.output, order.platformOrderId)
  })

  test('a bank day the ledger does not match, and a line given away without its claim, are named', async ({
    assert,
  }) => {
    const { line } = await paidPayment()
    await db.from('receipt_claims').where('statement_line_id', line.id).delete()
    // The import's bank posting, 1.00 more received than the line says (still balanced).
    const entry = await db
      .from('ledger_entries as e')
      .join('ledger_accounts as a', 'a.id', 'e.account_id')
      .whereRaw("a.code LIKE 'bank:%'")
      .select('e.id', 'e.transaction_id')
      .firstOrFail()
    const clearing = await db
      .from('ledger_accounts')
      .where({ owner: 'gateway', code: 'deposit_clearing' })
      .firstOrFail()
    await db.from('ledger_entries').where('id', entry.id).increment('amount', -100)
    await db
      .from('ledger_entries')
      .where({ transaction_id: entry.transaction_id, account_id: clearing.id })
      .increment('amount', 100)
    const kinds = (await verifyReconciliation()).problems.map((problem) => problem.kind)
    assert.includeMembers(kinds, ['bank_day_drift', 'line_given_unclaimed', 'unbacked_credit'])
    const result = await verified()
    assert.equal(result.code, 1)
    assert.include(
      result.output,
      "the statement says 120.00 THB net in, the ledger's bank account 121.00"
    )
  })
})

/** The problems of one kind, from a fresh check. */
async function problemsOf(kind: ProblemKind) {
  return (await verifyReconciliation()).problems.filter((problem) => problem.kind === kind)
}

/** Green, from the function and from the command. */
async function assertGreen(assert: any) {
  assert.deepEqual((await verifyReconciliation()).problems, [])
  const result = await verified()
  assert.equal(result.code, 0, result.output)
}

/** Red on `kind`, from the command too; returns the problems of that kind. */
async function assertRed(assert: any, kind: ProblemKind) {
  const problems = await problemsOf(kind)
  assert.isNotEmpty(problems, `no ${kind}`)
  const result = await verified()
  assert.equal(result.code, 1, result.output)
  assert.include(result.output, `${kind}: `)
  return problems
}

function importFile(account: DepositAccount, content: string, layout = 'neutral') {
  return importStatement(
    { deposit_account_id: account.id, layout, file_name: 'statement.csv', content },
    TEST_ACTOR
  )
}

/** A KBank export of these (time, deposit satang, printed balance) credits, in this order. */
function kbank(lines: Array<[DateTime, number, string]>) {
  return [
    'Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details',
    ...lines.map(([at, amount, balance]) => {
      const local = at.setZone('UTC+7')
      return [
        local.toFormat('dd-LL-yy'),
        local.toFormat('HH:mm'),
        'Transfer Deposit',
        '',
        `"${formatAmount(amount)}"`,
        `"${balance}"`,
        'K PLUS',
        '',
      ].join(',')
    }),
  ].join('\n')
}

/** The account's lines in id order (the file's order). */
async function linesOf(account: DepositAccount) {
  const rows = await db
    .from('statement_lines')
    .where('deposit_account_id', account.id)
    .orderBy('id')
  return rows.map((row) => Number(row.id))
}

/**
 * An account whose statement printed 1,000.00 THB, then four credits:
 * 1,100.00, 1,300.00 (the same minute), 1,350.00, 1,375.00.
 */
async function printedStatement() {
  await createDepositMerchant()
  const account = await createDepositAccount({ channel: 'transfer' })
  const at = DateTime.utc().minus({ hours: 3 })
  const summary = await importFile(
    account,
    kbank([
      [at, 100_00, '1,100.00'],
      [at, 200_00, '1,300.00'],
      [at.plus({ minutes: 1 }), 50_00, '1,350.00'],
      [at.plus({ minutes: 2 }), 25_00, '1,375.00'],
    ]),
    'kbank'
  )
  if (summary.newLines !== 4) throw new Error(`imported ${JSON.stringify(summary)}`)
  const [a, b, c, d] = await linesOf(account)
  return { account, at, a, b, c, d }
}

test.group('reconcile:verify against what the bank printed', (group) => {
  group.each.setup(() => resetDatabase())

  test('a clean import printing balances stays green: oldest or newest first, several lines a minute', async ({
    assert,
  }) => {
    const { account, at } = await printedStatement()
    // The next statement, written newest first, two lines in one minute.
    const next = await importFile(
      account,
      kbank([
        [at.plus({ minutes: 6 }), 5_00, '1,410.00'],
        [at.plus({ minutes: 5 }), 20_00, '1,405.00'],
        [at.plus({ minutes: 5 }), 10_00, '1,385.00'],
      ]),
      'kbank'
    )
    assert.equal(next.newLines, 3)
    await assertGreen(assert)
  })

  test("a line's amount or balance changed after import breaks the printed balances, naming the lines", async ({
    assert,
  }) => {
    const { account, at, b, c, d } = await printedStatement()
    await assertGreen(assert)

    await db.from('statement_lines').where('id', c).update({ amount: 60_00 })
    const [amount] = await assertRed(assert, 'printed_balance_break')
    assert.equal(
      amount.detail,
      `deposit account ${amount.depositAccountId}: statement line #${c} (credit 60.00 THB) prints a balance of ` +
        `1,350.00 THB after line #${b}'s 1,300.00 THB, where 1,360.00 THB follows: -10.00 THB between them ` +
        'is not on the statement; a line was changed or deleted after import'
    )
    assert.lengthOf(await problemsOf('printed_balance_break'), 1)
    // The reconciliation page's check, for the account and the lines' bank days, says the same.
    const dayOf = (time: DateTime) => formatGatewayDateTime(time.toJSDate())!.slice(0, 10)
    const scoped = await verifyReconciliation({
      scope: { depositAccountId: account.id, from: dayOf(at), to: dayOf(at.plus({ minutes: 2 })) },
    })
    assert.include(
      scoped.problems.filter((problem) => problem.kind === 'printed_balance_break')[0]?.detail,
      `statement line #${c} (credit 60.00 THB)`
    )

    await db
      .from('statement_lines')
      .where('id', c)
      .update({ amount: 50_00, balance_after: 1_340_00 })
    const breaks = await assertRed(assert, 'printed_balance_break')
    assert.lengthOf(breaks, 1, 'one line changed, one problem')
    assert.include(
      breaks[0].detail,
      `statement line #${c} prints a balance of 1,340.00 THB, where line #${b} before it (1,300.00 THB) ` +
        `and line #${d} after it (1,375.00 THB) say 1,350.00 THB: its balance was changed after import`
    )
  })

  test('a line deleted after import breaks the printed balances; the last one, the ledger against them', async ({
    assert,
  }) => {
    const { account, a, b, c, d } = await printedStatement()
    await assertGreen(assert)

    await db.from('statement_lines').where('id', c).delete()
    const [gap] = await assertRed(assert, 'printed_balance_break')
    assert.include(
      gap.detail,
      `statement line #${d} (credit 25.00 THB) prints a balance of 1,375.00 THB after line #${b}'s ` +
        '1,300.00 THB, where 1,325.00 THB follows: 50.00 THB between them is not on the statement'
    )
    // The chain holds from the first line to the last: the ledger agrees with it.
    assert.lengthOf(await problemsOf('printed_balance_drift'), 0)

    await db.from('statement_lines').where('id', d).delete()
    assert.lengthOf(await problemsOf('printed_balance_break'), 0)
    const [drift] = await assertRed(assert, 'printed_balance_drift')
    assert.equal(
      drift.detail,
      `deposit account ${account.id}: the bank printed 1,000.00 THB before statement line #${a} and ` +
        `1,300.00 THB after line #${b}, 300.00 THB net in; the ledger's bank account moved 375.00 THB`
    )
    assert.equal(drift.depositAccountId, account.id)
  })

  test('one transfer stored twice (a second line of its bank reference without the key) is named, exit 1', async ({
    assert,
  }) => {
    await createDepositMerchant()
    const mine = await createDepositAccount({ channel: 'transfer' })
    const other = await createDepositAccount({ channel: 'transfer' })
    const at = DateTime.utc().minus({ minutes: 10 })
    await importFile(
      mine,
      'date_time,direction,amount,reference,description,trans_ref\n' +
        `${formatGatewayDateTime(at.toJSDate())},credit,640.00,,TRANSFER,TXTWICE1\n`
    )
    const [original] = await linesOf(mine)
    await assertGreen(assert)

    // As a line stored before transfer_key was unique: the same transfer, no key, on another account.
    const [importId] = await db.table('statement_imports').insert({
      deposit_account_id: other.id,
      layout: 'neutral',
      file_name: 'older.csv',
      file_sha256: '0'.repeat(64),
      line_count: 1,
      new_lines: 1,
      actor: 'straight into the database',
      created_at: new Date(),
    })
    const [copy] = await db.table('statement_lines').insert({
      deposit_account_id: other.id,
      import_id: importId,
      fingerprint: 'f'.repeat(64),
      line_at: at.toJSDate(),
      direction: 'credit',
      amount: 640_00,
      reference: null,
      trans_ref: 'TXTWICE1',
      transfer_key: null,
      description: 'TRANSFER IN',
      status: 'unmatched',
      note: 'no open order',
      created_at: new Date(),
    })
    const [twice] = await assertRed(assert, 'transfer_stored_twice')
    assert.equal(
      twice.detail,
      `statement lines #${original} (deposit account ${mine.id}) and #${copy} (deposit account ${other.id}) ` +
        "are one credit transfer, the bank's TXTWICE1: the bank moved its money once; check how each line was decided"
    )
  })

  test('one transfer claimed twice (a claim naming the bank reference of a line another claim took) is named, exit 1', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const paid = async (amount: string, transRef: string) => {
      const order = await createPayment(who, amount)
      const line = await receiveLine(order.depositAccountId, {
        amount: order.transferAmount,
        transRef,
      })
      const claim = await db
        .from('receipt_claims')
        .where('statement_line_id', line.id)
        .firstOrFail()
      return { order, line, claim }
    }
    const first = await paid('210.00', 'TXCLAIM1')
    const second = await paid('220.00', 'TXCLAIM2')
    await assertGreen(assert)

    // The first claim from before claims carried their line's reference; the
    // second names the first's transfer (its unique key would refuse it otherwise).
    await db.from('receipt_claims').where('id', first.claim.id).update({ trans_ref: null })
    await db.from('receipt_claims').where('id', second.claim.id).update({ trans_ref: 'TXCLAIM1' })
    const [twice] = await assertRed(assert, 'transfer_claimed_twice')
    assert.equal(
      twice.detail,
      `claim ${second.claim.id} (match, ${second.order.platformOrderId}) names the transfer TXCLAIM1, ` +
        `which is statement line #${first.line.id} of deposit account ${first.line.deposit_account_id}, ` +
        `taken by claim ${first.claim.id} (match, ${first.order.platformOrderId}): one transfer credited twice`
    )
  })

  test('a claim naming another transfer than its own line (a slip approved on the wrong line before claims carried their transfer) is named, exit 1', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const order = await createPayment(who, '230.00')
    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      transRef: 'TXLINE1',
    })
    const claim = await db.from('receipt_claims').where('statement_line_id', line.id).firstOrFail()
    await assertGreen(assert)

    await db.from('receipt_claims').where('id', claim.id).update({ trans_ref: 'TXSLIP9' })
    const [mismatch] = await assertRed(assert, 'claim_transfer_mismatch')
    assert.equal(
      mismatch.detail,
      `claim ${claim.id} (match) names the transfer TXSLIP9, but its statement line #${line.id} ` +
        "is the bank's transfer TXLINE1: check which transfer paid it"
    )
  })

  test('a payout marked successful by hand long ago without its debit line is named with who completed it', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor
    const payout = await pendingWithdrawal(who, '250.00')
    await recordPayoutOutcome(
      { platform_order_id: payout.platformOrderId, outcome: 'success' },
      alice
    )
    // Inside the window: an open item, not a failure.
    await assertGreen(assert)

    const longAgo = DateTime.utc().minus({ days: 10 })
    await db
      .from('payout_confirmations')
      .where('payout_order_id', payout.id)
      .update({ created_at: longAgo.toJSDate() })
    const [missing] = await assertRed(assert, 'payout_debit_missing')
    assert.match(
      missing.detail,
      new RegExp(
        `^withdraw ${payout.platformOrderId} was marked successful by ${alice.name} on ` +
          `${formatGatewayDateTime(longAgo.toJSDate())} and no debit line of 250\\.00 THB has confirmed it ` +
          'within 3 bank days \\(payout confirmation \\d+\\)'
      )
    )

    // Its debit line arrives: confirmed, green again.
    await importFile(
      account,
      'date_time,direction,amount,reference,description\n' +
        `${formatGatewayDateTime(new Date())},debit,250.00,${payout.platformOrderId},BULK\n`
    )
    await assertGreen(assert)
  })

  test('a posting on the receivable account that no claim backs is named, exit 1', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor
    // A receivable opened (marked paid before its line) and cleared by its line: backed.
    const early = await createPayment(who, '150.00')
    await markPaymentPaid(
      { platform_order_id: early.platformOrderId, reason_code: 'slip_verified', comment: 'slip' },
      alice
    )
    await receiveLine(early.depositAccountId, {
      amount: early.transferAmount,
      reference: early.platformOrderId,
    })
    const cleared = await db
      .from('ledger_transactions')
      .where({ kind: 'receivable_cleared', reference_id: early.platformOrderId })
    assert.lengthOf(cleared, 1)
    // A payment paid by its line, as the matcher pays it.
    const order = await createPayment(who, '120.00')
    const line = await receiveLine(order.depositAccountId, { amount: order.transferAmount })
    await assertGreen(assert)

    // The line "clears" a receivable that never was: its claim is the matcher's.
    const posting = await db.transaction((trx) =>
      postLedgerTransaction(trx, receivableClearedPosting(line, order))
    )
    const [unbacked] = await assertRed(assert, 'unbacked_receivable_posting')
    assert.equal(
      unbacked.detail,
      `ledger transaction ${posting} (receivable_cleared, payment ${order.platformOrderId}) moves ` +
        `deposit_receivable by ${formatThb(order.transferAmount)} THB and no receipt claim accounts for it`
    )
  })
})

let sequence = 0

/** A withdrawal through the bulk-file connector, exported (pending) as a bulk file would. */
async function pendingWithdrawal(who: TestMerchant, amount: string) {
  sequence += 1
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, amount, merchant_order_id: `RV${sequence}` })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PayoutOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  order.status = 'pending'
  await order.save()
  return order
}
