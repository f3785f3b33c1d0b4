import { cliActor } from '#core/actor'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { recordPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { confirmDebitLine } from '#reconciliation/actions/confirm_debit_line'
import { explainDebitLine } from '#reconciliation/actions/explain_debit_line'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { importStatement } from '#reconciliation/actions/import_statement'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { verifyLedger } from '#ledger/verify'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'
import { byField, refusal } from '#tests/helpers/actions'
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
import { operatorActor } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'

/**
 * Money out, tied to the bank: a debit line confirms one transfer (a payout,
 * a return to a payer); a transfer without its line is an open item; a debit
 * nothing claims is an exception until an operator accounts for it.
 */

let sequence = 0

/** A withdrawal through the bulk-file connector, exported (pending) as a bulk file would. */
async function pendingWithdrawal(who: TestMerchant, amount = '100.00') {
  sequence += 1
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, { ...PAYOUT_FIELDS, amount, merchant_order_id: `BD${sequence}` })
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

/** One statement line of `direction` on the account, imported as a bank file. */
async function importLine(
  accountId: number,
  line: { direction: 'credit' | 'debit'; amount: number; reference?: string }
) {
  const imported = await importStatement(
    {
      deposit_account_id: accountId,
      file_name: `statement-${++sequence}.csv`,
      content:
        'date_time,direction,amount,reference,description\n' +
        `${formatGatewayDateTime(new Date())},${line.direction},${formatAmount(line.amount)},${line.reference ?? ''},BULK ${sequence}\n`,
    },
    TEST_ACTOR
  )
  const row = await db.from('statement_lines').where('import_id', imported.importId).firstOrFail()
  return { ...row, id: Number(row.id) }
}

async function setUp() {
  const who = await createPayoutMerchant(10_000_00, { payoutRoute: 'bulk_file' })
  const account = await createDepositAccount()
  return { who, account, alice: (await operatorActor('alice@example.com')).actor }
}

async function assertReconciled(assert: any) {
  assert.deepEqual((await verifyLedger()).drifts, [])
  const report = await verifyReconciliation()
  assert.deepEqual(report.problems, [])
  return report
}

test.group('bank debits: money out confirmed by the bank', (group) => {
  group.each.setup(() => resetDatabase())

  test('a bulk-file payout is completed and confirmed by its debit line at once', async ({
    assert,
  }) => {
    const { who, account } = await setUp()
    const payout = await pendingWithdrawal(who)
    const line = await importLine(account.id, {
      direction: 'debit',
      amount: payout.amount,
      reference: payout.platformOrderId,
    })
    assert.equal(line.status, 'matched')
    await payout.refresh()
    assert.equal(payout.status, 'success')
    const confirmation = await db.from('payout_confirmations').firstOrFail()
    assert.equal(confirmation.path, 'bank_line')
    assert.equal(Number(confirmation.statement_line_id), line.id)
    const report = await assertReconciled(assert)
    assert.lengthOf(report.openTransfers, 0)
  })

  test('a payout completed by hand is an open item until its debit line arrives; a second debit is an exception until explained', async ({
    assert,
  }) => {
    const { who, account, alice } = await setUp()
    const payout = await pendingWithdrawal(who, '250.00')
    await recordPayoutOutcome(
      { platform_order_id: payout.platformOrderId, outcome: 'success' },
      alice
    )
    let report = await assertReconciled(assert)
    assert.lengthOf(report.openTransfers, 1)
    assert.equal(report.openTransfers[0].platformOrderId, payout.platformOrderId)
    assert.equal(report.openTransfers[0].path, 'by_hand')

    const line = await importLine(account.id, {
      direction: 'debit',
      amount: 25_000,
      reference: payout.platformOrderId,
    })
    assert.equal(line.status, 'matched')
    assert.equal(Number(line.order_id), payout.id)
    report = await assertReconciled(assert)
    assert.lengthOf(report.openTransfers, 0)

    // The bank debits the same payout again: nobody's transfer.
    const again = await importLine(account.id, {
      direction: 'debit',
      amount: 25_000,
      reference: payout.platformOrderId,
    })
    assert.equal(again.status, 'unmatched')
    report = await verifyReconciliation()
    assert.deepEqual(
      report.problems.map((problem) => problem.kind),
      ['unexplained_debit']
    )
    const fromCli = await ace('reconcile:verify')
    assert.equal(fromCli.code, 1)
    assert.include(fromCli.output, `statement line #${again.id}: 250.00 THB left deposit account`)

    // A line confirms one transfer: it cannot be the payout's as well.
    const twice = await refusal(
      confirmDebitLine(
        { statement_line_id: again.id, platform_order_id: payout.platformOrderId, comment: 'x' },
        alice
      )
    )
    assert.include(
      byField(twice).platform_order_id,
      `already confirmed by statement line #${line.id}`
    )

    const explained = await ace(
      'lines:explain',
      String(again.id),
      '--reason=bank_correction',
      '--comment=the bank debited twice; the correction comes on tomorrow’s statement'
    )
    assert.equal(explained.code, 0, explained.output)
    await assertReconciled(assert)
    const refused = await refusal(
      explainDebitLine({ statement_line_id: again.id, reason_code: 'other', comment: 'y' }, alice)
    )
    assert.include(
      refused.message,
      `statement line #${again.id} already confirms a debit explained by`
    )
  })

  test('a line returned to its payer: its debit, without any reference, confirms the return', async ({
    assert,
  }) => {
    const { account } = await setUp()
    await createDepositMerchant()
    const credit = await receiveLine(account.id, { amount: 40_000 })
    await returnStatementLine(
      {
        statement_line_id: credit.id,
        bank: 'KTB',
        account_no: '1234567890',
        account_name: 'Somchai Jaidee',
        reason_code: 'no_matching_order',
        comment: 'nobody claims it',
      },
      // From the shell: applied at once (the back-office waits for an admin).
      cliActor()
    )
    let report = await assertReconciled(assert)
    assert.deepEqual(
      report.openTransfers.map((item) => [item.path, item.returnedLineId]),
      [['return', credit.id]]
    )
    const debit = await importLine(account.id, { direction: 'debit', amount: 40_000 })
    assert.equal(debit.status, 'matched')
    assert.equal(debit.note, `return of statement line #${credit.id}`)
    report = await assertReconciled(assert)
    assert.lengthOf(report.openTransfers, 0)
  })

  test('an operator confirms a debit the matcher could not tell, once', async ({ assert }) => {
    const { who, account, alice } = await setUp()
    const payout = await pendingWithdrawal(who, '75.00')
    // The bank's export lost the reference.
    const debit = await importLine(account.id, { direction: 'debit', amount: 7_500 })
    assert.equal(debit.status, 'unmatched')
    assert.deepEqual(
      (await verifyReconciliation()).problems.map((problem) => problem.kind),
      ['unexplained_debit']
    )
    const wrong = await refusal(
      confirmDebitLine(
        { statement_line_id: debit.id, platform_order_id: payout.platformOrderId, comment: 'x' },
        alice
      ).then(async () => {
        // Confirmed; a second confirmation of the same line is refused.
        return confirmDebitLine(
          { statement_line_id: debit.id, platform_order_id: payout.platformOrderId, comment: 'x' },
          alice
        )
      })
    )
    assert.include(wrong.message, `statement line #${debit.id} already confirms payout order`)
    await payout.refresh()
    assert.equal(payout.status, 'success', 'the statement was the bank’s answer')
    const balance = (await signedPost('/balance', who, authBody(who))).json.data
    assert.equal(balance.freeze_balance, 0)
    await assertReconciled(assert)
  })
})
