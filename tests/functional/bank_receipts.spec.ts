import { test } from '@japa/runner'
import { readFile, rm } from 'node:fs/promises'
import db from '@adonisjs/lucid/services/db'
import PaymentOrder from '#payments/models/payment_order'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { markPaymentPaid, type MarkPaidResult } from '#payments/actions/mark_payment_paid'
import { settlePayment } from '#payments/actions/settle_payment'
import { reviewSlip } from '#slips/actions/review_slip'
import { uploadSlip } from '#slips/actions/upload_slip'
import { approveRequest } from '#approvals/actions/approve_request'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { reverseReceivable } from '#reconciliation/actions/reverse_receivable'
import { importStatement } from '#reconciliation/actions/import_statement'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { storeStatement } from '#reconciliation/statements'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { verifyLedger, type LedgerDrift } from '#ledger/verify'
import { readMerchantBalance } from '#ledger/ledger'
import { orderTimeline } from '#core/order_events'
import { cliActor, type Actor } from '#core/actor'
import { formatGatewayDateTime } from '#core/clock'
import { byField, refusal } from '#tests/helpers/actions'
import {
  createDepositAccount,
  createDepositMerchant,
  createPaymentOrder,
  resetDatabase,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { operatorActor, removeSlipImages } from '#tests/helpers/decisions'
import { sandboxSlip, sandboxTransRef } from '#tests/helpers/slips'
import { receiveLine, lineRow } from '#tests/helpers/lines'
import { ace } from '#tests/helpers/ace'

/**
 * Money that reaches a merchant is money the bank received, claimed once:
 * the sequences of slip approvals, line decisions and imports that credited
 * one transfer twice, or more than arrived, each played again.
 */

const APPROVE = { decision: 'approve', reason_code: 'slip_verified', comment: 'slip checked' }
const CREDIT = { reason_code: 'merchant_claimed', comment: 'merchant says it is theirs' }

/** Merchant fee 1.5 %, a transfer account, four eyes above 1,000.00 THB. */
async function setUp(threshold: string | null = '1000.00') {
  const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
  const account = await createDepositAccount({ channel: 'transfer' })
  if (threshold)
    await configurePlatform({ code: 'test', four_eyes_threshold: threshold }, cliActor())
  return {
    who,
    account,
    alice: (await operatorActor('alice@example.com')).actor,
    bob: (await operatorActor('bob@example.com')).actor,
  }
}

let sequence = 0

function transferOrder(who: TestMerchant, amount: string) {
  sequence += 1
  return createPaymentOrder(who, `BR${sequence}`, amount, '/payment/create-transfer', {
    account_name: 'Somchai Jaidee',
  })
}

/** The customer sends `amount` through the sandbox bank; its slip is uploaded on the payment page. */
async function payWithSlip(order: PaymentOrder, amount: string) {
  const paid = await sandboxPay({ platform_order_id: order.platformOrderId, amount }, TEST_ACTOR)
  const image = await readFile(paid.slipPath)
  await rm(paid.slipPath, { force: true })
  const { slip } = await uploadSlip({
    order: await PaymentOrder.findOrFail(order.id),
    image,
    source: 'payment_page',
    actor: { name: 'customer' },
  })
  const line = await db.from('statement_lines').where('import_id', paid.summary.importId).first()
  return { slip, line: { ...line, id: Number(line.id) }, transRef: paid.transRef }
}

/** What the merchant holds: balance + unsettle_balance, satang. */
async function credited(who: TestMerchant) {
  const balance = await readMerchantBalance(who.merchant.id)
  return balance.balance + balance.unsettleBalance
}

async function assertReconciled(assert: any) {
  const ledger = await verifyLedger()
  assert.deepEqual(ledger.drifts as LedgerDrift[], [])
  const bank = await verifyReconciliation()
  assert.deepEqual(bank.problems, [])
}

function approve(id: number, actor: Actor) {
  return approveRequest({ approval_request_id: id, comment: 'checked' }, actor)
}

test.group('bank receipts: one transfer, one credit', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipImages)

  test('underpaid: the slip and the line credited to the merchant, both approved: one credit of what arrived', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp()
    const order = await transferOrder(who, '1500.00')
    assert.equal(order.transferAmount, 150_000)
    const { slip, line } = await payWithSlip(order, '1499.00')
    assert.equal(line.status, 'unmatched')

    // Approving pays the transfer's amount only as an explicit decision.
    const refused = await refusal(reviewSlip({ slip_id: slip.id, ...APPROVE }, alice))
    assert.match(
      byField(refused).amount_policy,
      /statement line #\d+ received 1,499\.00 THB, not the transfer_amount 1,500\.00 THB: credit what was received \(1,476\.51 THB after the fee of 22\.49\)/
    )
    const slipRequest = await reviewSlip(
      { slip_id: slip.id, ...APPROVE, amount_policy: 'credit_received' },
      alice
    )
    assert.equal(slipRequest.decision === 'approve' && slipRequest.outcome, 'approval_requested')
    const lineRequest = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchantId, ...CREDIT },
      alice
    )
    assert.equal(lineRequest.outcome, 'approval_requested')

    await approve((slipRequest as any).request.id, bob)
    const second = await refusal(approve(lineRequest.request!.id, bob))
    assert.match(
      second.message,
      new RegExp(
        `approval request #${lineRequest.request!.id} can no longer be carried out: statement line #${line.id} was already claimed: slip ${slip.id} of ${order.platformOrderId} approved by operator:bob@example.com \\(approval request #\\d+\\)`
      )
    )

    // 1,499.00 received, 1,476.51 credited: what arrived less the fee on it.
    assert.equal(await credited(who), 147_651)
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.equal(order.paidAmount, 149_900)
    assert.equal(order.fee, 2_249)
    const matched = await lineRow(line.id)
    assert.equal(matched.status, 'matched')
    assert.equal(Number(matched.order_id), order.id)
    const callback = await db
      .from('callback_outbox')
      .where({ order_type: 'payment', order_id: order.id })
      .firstOrFail()
    assert.equal(JSON.parse(callback.body).amount, 1499)
    assert.include(callback.body, '"amount":1499.00')
    const claims = await db.from('receipt_claims')
    assert.lengthOf(claims, 1)
    assert.equal(claims[0].path, 'slip_approval')
    assert.equal(claims[0].amount_policy, 'credit_received')
    assert.equal(Number(claims[0].statement_line_id), line.id)

    // Settled, the merchant can withdraw exactly that.
    await settlePayment(order.id)
    assert.deepInclude(await readMerchantBalance(who.merchant.id), {
      balance: 147_651,
      unsettleBalance: 0,
    })
    await assertReconciled(assert)
  })

  test('line credited to the merchant first, slip approved after: refused, naming the credit', async ({
    assert,
  }) => {
    const { who, alice } = await setUp(null)
    const order = await transferOrder(who, '1600.00')
    const { slip, line } = await payWithSlip(order, '1599.00')
    const first = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchantId, ...CREDIT },
      alice
    )
    assert.equal(first.outcome, 'credited')

    const refused = await refusal(
      reviewSlip({ slip_id: slip.id, ...APPROVE, amount_policy: 'credit_received' }, alice)
    )
    assert.equal(
      byField(refused).general,
      `this transfer is statement line #${line.id} (1,599.00 THB), which was already claimed: credited to merchant ${who.merchantId} by operator:alice@example.com at ${formatGatewayDateTime((await db.from('receipt_claims').firstOrFail()).claimed_at)}, statement line #${line.id}`
    )
    // 1,599.00 received, 1,575.01 credited once (fee 23.99).
    assert.equal(await credited(who), 157_501)
    await order.refresh()
    assert.equal(order.status, 'open')
    await assertReconciled(assert)
  })

  test('slip approved before its line arrives: the line clears the receivable and can be credited to nobody', async ({
    assert,
  }) => {
    const { who, account, alice } = await setUp(null)
    const order = await transferOrder(who, '2300.00')
    const transRef = sandboxTransRef()
    const { slip } = await uploadSlip({
      order,
      image: await sandboxSlip({ transRef, amount: order.transferAmount }),
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    assert.equal(slip.verificationStatus, 'pending')
    const paid = await reviewSlip({ slip_id: slip.id, ...APPROVE }, alice)
    assert.equal(paid.decision === 'approve' && paid.outcome, 'paid')
    // 2,300.00 less 1.5 %: credited on the slip's word, owed by the bank.
    assert.equal(await credited(who), 226_550)
    let report = await verifyReconciliation()
    assert.deepEqual(report.problems, [])
    assert.lengthOf(report.openReceivables, 1)
    assert.equal(report.openReceivables[0].platformOrderId, order.platformOrderId)

    const imported = await importStatement(
      {
        deposit_account_id: account.id,
        file_name: 'kbank-today.csv',
        content:
          'date_time,direction,amount,reference,description,trans_ref\n' +
          `${formatGatewayDateTime(new Date())},credit,2300.00,,TRANSFER FROM SCB X7890 SOMCHAI,${transRef}\n`,
      },
      TEST_ACTOR
    )
    assert.equal(imported.results.matched, 1)
    const line = await db
      .from('statement_lines')
      .where('import_id', imported.importId)
      .firstOrFail()
    assert.equal(line.status, 'matched')
    assert.equal(Number(line.order_id), order.id)

    const refused = await refusal(
      creditMerchantFromLine(
        { statement_line_id: Number(line.id), merchant_id: who.merchantId, ...CREDIT },
        alice
      )
    )
    assert.match(
      byField(refused).general,
      new RegExp(
        `statement line #${line.id} was already claimed: slip ${slip.id} of ${order.platformOrderId} approved`
      )
    )
    const fromCli = await ace(
      'lines:credit',
      String(line.id),
      who.merchantId,
      '--reason=merchant_claimed',
      '--comment=again'
    )
    assert.equal(fromCli.code, 1)
    assert.include(fromCli.output, 'was already claimed')
    assert.equal(await credited(who), 226_550)

    report = await verifyReconciliation()
    assert.deepEqual(report.problems, [])
    assert.lengthOf(report.openReceivables, 0)
    const timeline = await orderTimeline('payment', order.id)
    assert.isTrue(
      timeline.some((event) => event.reason?.includes(`statement line ${line.id} received`))
    )
    await assertReconciled(assert)
  })

  test('approved on the slip for 500.00, its line brings 480.00: never credited twice, corrected to what arrived', async ({
    assert,
  }) => {
    const { who, account, alice } = await setUp(null)
    const order = await transferOrder(who, '500.00')
    const transRef = sandboxTransRef()
    const { slip } = await uploadSlip({
      order,
      image: await sandboxSlip({ transRef, amount: order.transferAmount }),
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    await reviewSlip({ slip_id: slip.id, ...APPROVE }, alice)
    assert.equal(await credited(who), 49_250)

    const imported = await importStatement(
      {
        deposit_account_id: account.id,
        file_name: 'short.csv',
        content:
          'date_time,direction,amount,reference,description,trans_ref\n' +
          `${formatGatewayDateTime(new Date())},credit,480.00,,TRANSFER FROM SCB X7890,${transRef}\n`,
      },
      TEST_ACTOR
    )
    const line = await db
      .from('statement_lines')
      .where('import_id', imported.importId)
      .firstOrFail()
    assert.equal(line.status, 'unmatched')
    assert.equal(
      line.note,
      `${order.platformOrderId} was credited before its line, for 50000 satang`
    )

    const elsewhere = await refusal(
      creditMerchantFromLine(
        { statement_line_id: Number(line.id), merchant_id: who.merchantId, ...CREDIT },
        alice
      )
    )
    assert.include(
      elsewhere.message,
      `is the bank line of ${order.platformOrderId}, which was credited before its line arrived`
    )
    const attach = {
      statement_line_id: Number(line.id),
      platform_order_id: order.platformOrderId,
      reason_code: 'customer_confirmed',
      comment: 'the short transfer of the slip',
    }
    const unsaid = await refusal(attachStatementLine(attach, alice))
    assert.equal(
      byField(unsaid).amount_policy,
      `${order.platformOrderId} was credited 492.50 THB for 500.00 THB expected, but line #${line.id} received 480.00 THB: credit what was received (472.80 THB after the fee of 7.20; the merchant's balance moves by -19.70 THB)`
    )
    const attached = await attachStatementLine(
      { ...attach, amount_policy: 'credit_received' },
      alice
    )
    assert.equal(attached.outcome, 'receivable_cleared')
    // 480.00 received, 472.80 credited: what arrived less the fee, once.
    assert.equal(await credited(who), 47_280)
    await order.refresh()
    assert.equal(order.paidAmount, 48_000)
    assert.equal(order.fee, 720)
    await settlePayment(order.id)
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 47_280)
    await assertReconciled(assert)
  })

  test('credited before its line, which never comes: it never settles, verify names it, an operator takes it back', async ({
    assert,
  }) => {
    const { who, alice } = await setUp(null)
    const order = await transferOrder(who, '800.00')
    await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'other',
        comment: 'customer insisted',
      },
      alice
    )
    assert.deepInclude(await readMerchantBalance(who.merchant.id), { unsettleBalance: 78_800 })
    // Not withdrawable while the bank does not have it, whatever the delay.
    assert.isFalse(await settlePayment(order.id))
    const settled = await ace('settle:run', '--now')
    assert.equal(settled.code, 0)
    assert.deepInclude(await readMerchantBalance(who.merchant.id), { balance: 0 })

    const later = await verifyReconciliation({ now: new Date(Date.now() + 25 * 3_600_000) })
    assert.deepEqual(
      later.problems.map((problem) => problem.kind),
      ['stale_receivable']
    )
    const reversed = await ace(
      'receivables:reverse',
      order.platformOrderId,
      '--reason=no_money_received',
      '--comment=no credit on three days of statements'
    )
    assert.equal(reversed.code, 0, reversed.output)
    assert.include(
      reversed.output,
      '788.00 THB taken back from the merchant (fee 12.00), the order is freeze'
    )
    assert.deepInclude(await readMerchantBalance(who.merchant.id), {
      balance: 0,
      unsettleBalance: 0,
    })
    await order.refresh()
    assert.equal(order.status, 'freeze')
    const again = await refusal(
      reverseReceivable(
        { platform_order_id: order.platformOrderId, reason_code: 'other', comment: 'again' },
        alice
      )
    )
    assert.include(byField(again).platform_order_id, 'was already reversed')
    assert.deepEqual(
      (await verifyReconciliation({ now: new Date(Date.now() + 25 * 3_600_000) })).problems,
      []
    )
    await assertReconciled(assert)
  })

  test('two transfers of the amount in the same minute: the slip’s sending bank tells its line', async ({
    assert,
  }) => {
    const { who, account, alice } = await setUp(null)
    const order = await transferOrder(who, '650.00')
    const transRef = sandboxTransRef()
    const at = new Date()
    // The bank's export carries no transaction reference; the provider knows the transfer.
    await db.transaction((trx) =>
      storeStatement(trx, {
        account,
        layout: 'sandbox',
        fileName: `two-${transRef}`,
        fileSha256: transRef.padEnd(64, '0'),
        actor: TEST_ACTOR,
        lines: [
          {
            lineNumber: 1,
            lineAt: at,
            direction: 'credit',
            amount: order.transferAmount,
            reference: null,
            description: `SANDBOX TRANSFER ${transRef} FROM SCB X7890 SOMCHAI JAIDEE`,
          },
          {
            lineNumber: 2,
            lineAt: at,
            direction: 'credit',
            amount: order.transferAmount,
            reference: null,
            description: 'TRANSFER FROM KTB X1111 SOMSRI MEEDEE',
          },
        ],
      })
    )
    const { slip } = await uploadSlip({
      order,
      image: await sandboxSlip({ transRef, amount: order.transferAmount, bankCode: 'SCB' }),
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    await db
      .from('payment_orders')
      .where('id', order.id)
      .update({ status: 'freeze', status_before_freeze: 'open' })
    await reviewSlip({ slip_id: slip.id, ...APPROVE }, alice)
    const claim = await db.from('receipt_claims').firstOrFail()
    const line = await lineRow(Number(claim.statement_line_id))
    assert.include(line.description, 'FROM SCB')
    assert.equal(await credited(who), 64_025)
    await assertReconciled(assert)
  })

  test('one transfer’s slip uploaded for two orders: the second approval is refused', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp(null)
    const first = await transferOrder(who, '4100.00')
    const second = await transferOrder(who, '4100.00')
    const transRef = sandboxTransRef()
    const image = await sandboxSlip({ transRef, amount: first.transferAmount })
    const slips = []
    for (const order of [first, second]) {
      const { slip } = await uploadSlip({
        order,
        image,
        source: 'payment_page',
        actor: { name: 'customer' },
      })
      slips.push(slip)
    }
    assert.include(slips[1].verificationMsg, '')
    await reviewSlip({ slip_id: slips[0].id, ...APPROVE }, alice)
    const refused = await refusal(reviewSlip({ slip_id: slips[1].id, ...APPROVE }, bob))
    assert.match(
      byField(refused).general,
      new RegExp(
        `the transfer ${transRef} of slip ${slips[1].id} was already claimed: slip ${slips[0].id} of ${first.platformOrderId} approved by operator:alice@example.com at .*, its bank line not yet received`
      )
    )
    await second.refresh()
    assert.equal(second.status, 'open')
    // 4,100.00 less 61.50, once.
    assert.equal(await credited(who), 403_850)
    await assertReconciled(assert)
  })

  test('marked paid without a slip: its line, arriving later by amount and time, clears the receivable', async ({
    assert,
  }) => {
    const { who, alice } = await setUp(null)
    const order = await transferOrder(who, '500.00')
    const result = await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'the bank confirmed by phone',
      },
      alice
    )
    assert.equal(result.outcome, 'paid')
    const receivable = await db.from('receipt_claims').firstOrFail()
    assert.isNull(receivable.statement_line_id)
    assert.equal(receivable.path, 'mark_paid')

    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      lineAt: new Date(Date.now() - 30_000),
    })
    assert.equal(line.status, 'matched')
    assert.equal(Number(line.order_id), order.id)
    const cleared = await db.from('receipt_claims').where('id', receivable.id).firstOrFail()
    assert.equal(Number(cleared.statement_line_id), line.id)
    assert.isNotNull(cleared.cleared_at)
    // 500.00 less 7.50, once; the line moved no merchant money.
    assert.equal(await credited(who), 49_250)
    await assertReconciled(assert)
  })

  test('a line already there is claimed by marking the order paid; a second claim on it is refused in every way', async ({
    assert,
  }) => {
    const { who, alice } = await setUp(null)
    const order = await transferOrder(who, '300.00')
    // Paid by the customer after the order was frozen for review: the matcher leaves it.
    await db
      .from('payment_orders')
      .where('id', order.id)
      .update({ status: 'freeze', status_before_freeze: 'open' })
    const line = await receiveLine(order.depositAccountId, { amount: order.transferAmount })
    assert.equal(line.status, 'unmatched')

    await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'seen_on_statement',
        comment: 'the line is on the statement',
      },
      alice
    )
    const claim = await db.from('receipt_claims').firstOrFail()
    assert.equal(Number(claim.statement_line_id), line.id)
    assert.equal(claim.path, 'mark_paid')

    for (const attempt of [
      () =>
        creditMerchantFromLine(
          { statement_line_id: line.id, merchant_id: who.merchantId, ...CREDIT },
          alice
        ),
      () =>
        returnStatementLine(
          {
            statement_line_id: line.id,
            bank: 'SCB',
            account_no: '1234567890',
            account_name: 'Somchai Jaidee',
            reason_code: 'no_matching_order',
            comment: 'give it back',
          },
          alice
        ),
    ]) {
      const refused = await refusal(attempt())
      assert.include(refused.message, `statement line #${line.id} was already claimed`)
    }
    assert.equal(await credited(who), 29_550)
    await assertReconciled(assert)
  })

  test('a line an open receivable expects cannot be credited or returned elsewhere; attached to its order it clears it', async ({
    assert,
  }) => {
    const { who, alice } = await setUp(null)
    const order = await transferOrder(who, '700.00')
    const other = await transferOrder(who, '700.01')
    await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'phoned',
      },
      alice
    )
    // The line names the order but arrives as the statement's reference only.
    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      reference: order.platformOrderId,
    })
    assert.equal(line.status, 'matched', 'named by its reference, the line clears the receivable')

    // Without a reference and outside any window, an operator attaches it.
    await markPaymentPaid(
      {
        platform_order_id: other.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'phoned',
      },
      alice
    )
    await db
      .from('receipt_claims')
      .where('payment_order_id', other.id)
      .update({
        expected_to: new Date(Date.now() - 3_600_000),
        expected_from: new Date(Date.now() - 7_200_000),
      })
    const late = await receiveLine(other.depositAccountId, { amount: other.transferAmount })
    assert.equal(late.status, 'unmatched')
    const attached = await attachStatementLine(
      {
        statement_line_id: late.id,
        platform_order_id: other.platformOrderId,
        reason_code: 'customer_confirmed',
        comment: 'the transfer of the order marked paid',
      },
      alice
    )
    assert.equal(attached.outcome, 'receivable_cleared')
    // 700.00 − 10.50 and 700.01 − 10.50, each once.
    assert.equal(await credited(who), 68_950 + 68_951)
    await assertReconciled(assert)
  })
})

test.group('bank receipts: four eyes judge the money that moves', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipImages)

  test('a 100.00 order paid from its 50,000.00 transfer, crediting what was received, waits for a second operator', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp('1000.00')
    const order = await transferOrder(who, '100.00')
    const { slip, line } = await payWithSlip(order, '50000.00')
    assert.equal(line.status, 'unmatched')

    // The slip names the 50,000.00 transfer; approving it credits what was received.
    const marked = (await reviewSlip(
      { slip_id: slip.id, ...APPROVE, amount_policy: 'credit_received' },
      alice
    )) as MarkPaidResult
    // 50,000.00 is credited, above the 1,000.00 threshold: nothing moves on one decision.
    assert.equal(marked.outcome, 'approval_requested')
    assert.equal(await credited(who), 0)
    await order.refresh()
    assert.equal(order.status, 'open')

    await approve(marked.request!.id, bob)
    // 50,000.00 − 1.5 %: credited once the second operator agreed.
    assert.equal(await credited(who), 4_925_000)
    await assertReconciled(assert)
  })

  test('below the threshold on both counts, marking paid what was received moves at once', async ({
    assert,
  }) => {
    const { who, alice } = await setUp('1000.00')
    const order = await transferOrder(who, '100.00')
    const { slip, line } = await payWithSlip(order, '150.00')
    assert.equal(line.status, 'unmatched')
    const marked = (await reviewSlip(
      { slip_id: slip.id, ...APPROVE, amount_policy: 'credit_received' },
      alice
    )) as MarkPaidResult
    assert.equal(marked.outcome, 'paid')
    // 150.00 − 2.25.
    assert.equal(await credited(who), 14_775)
    await assertReconciled(assert)
  })
})
