import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { expirePayment } from '#payments/actions/expire_payment'
import { approveRequest } from '#approvals/actions/approve_request'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { verifyLedger } from '#ledger/verify'
import { readMerchantBalance } from '#ledger/ledger'
import { orderTimeline } from '#core/order_events'
import { cliActor } from '#core/actor'
import { ActionError } from '#core/validation'
import { AlreadyDone } from '#core/already_done'
import { byField, refusal } from '#tests/helpers/actions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  auditRows,
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
} from '#tests/helpers/decisions'
import { lineRow, receiveLine } from '#tests/helpers/lines'
import { ace } from '#tests/helpers/ace'

const ATTACH = { reason_code: 'late_payment', comment: 'customer paid after expiry' }
const CREDIT = { reason_code: 'merchant_claimed', comment: 'merchant sent the deposit slip' }
const RETURN = {
  bank: 'KTB',
  account_no: '9876543210',
  account_name: 'Somchai Jaidee',
  reason_code: 'no_matching_order',
  comment: 'nobody claims it',
}

async function setUp() {
  const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
  const account = await createDepositAccount()
  const alice = await operatorActor('alice@example.com')
  const bob = await operatorActor('bob@example.com')
  return { who, account, alice, bob }
}

/** A payment that expired, and the customer's transfer arriving afterwards: a late line. */
async function lateLine(who: Awaited<ReturnType<typeof setUp>>['who'], amount = '100.00') {
  const order = await createPayment(who, amount)
  assertTrue(await expirePayment(order.id, DateTime.utc().plus({ days: 1 })))
  await order.refresh()
  const line = await receiveLine(order.depositAccountId, {
    amount: order.transferAmount,
    reference: order.paymentReference ?? order.platformOrderId,
  })
  return { order, line }
}

function assertTrue(value: boolean) {
  if (!value) throw new Error('expected the order to expire')
}

async function assertBalancedLedger(assert: any) {
  const report = await verifyLedger()
  assert.deepEqual(report.drifts, [])
}

test.group('statement line decisions', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('a late line attached to its expired order credits amount − fee once; the order stays error', async ({
    assert,
  }) => {
    const { who, alice, bob } = await setUp()
    const { order, line } = await lateLine(who)
    assert.equal(line.status, 'late')
    assert.equal(line.note, order.platformOrderId)
    const callbacksBefore = (await callbackRowsOf(order)).length

    const result = await attachStatementLine(
      { statement_line_id: line.id, platform_order_id: order.platformOrderId, ...ATTACH },
      alice.actor
    )
    assert.equal(result.outcome, 'late_credited')
    assert.include(result, { credited: 10_000 - 100, fee: 100 })
    await order.refresh()
    assert.equal(order.status, 'error')
    const balance = await readMerchantBalance(who.merchant.id)
    assert.equal(balance.balance, 10_000 - 100)
    const postings = await postingsOf(order, 'payment_late')
    assert.lengthOf(postings, 1)
    assert.equal(postings[0].idempotency_key, `payment_late:statement_line:${line.id}`)
    assert.lengthOf(await callbackRowsOf(order), callbacksBefore, 'no new callback: no new status')
    const events = await orderTimeline('payment', order.id)
    assert.include(events.at(-1)!.reason, `statement line #${line.id}`)

    const row = await lineRow(line.id)
    assert.equal(row.decision, 'attached')
    assert.equal(row.decided_by, alice.operator.id)
    assert.equal(row.reason_code, 'late_payment')
    assert.equal(Number(row.payment_order_id), order.id)
    assert.lengthOf(await auditRows('statement_line.attach'), 1)

    const again = await refusal(
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: order.platformOrderId, ...ATTACH },
        alice.actor
      )
    )
    // A double submit: a notice that it was done, by whom and when.
    assert.instanceOf(again, AlreadyDone)
    assert.match(
      byField(again).general,
      /^statement line #\d+ was already attached by you at \d{2}:\d{2} \(GMT\+7\); nothing more to do$/
    )
    // The same operator attaching it to another order is not a repeat: an error, nothing saved.
    const other = await createPayment(who, '100.00')
    const elsewhere = await refusal(
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: other.platformOrderId, ...ATTACH },
        alice.actor
      )
    )
    assert.notInstanceOf(elsewhere, AlreadyDone)
    assert.include(byField(elsewhere).general, 'a line is decided once; nothing was saved')
    // Another operator's second try hears how the money was taken.
    const byBob = await refusal(
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: order.platformOrderId, ...ATTACH },
        bob.actor
      )
    )
    assert.include(byField(byBob).general, 'was already claimed: credited as the late payment of')
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 9_900)
    await assertBalancedLedger(assert)
  })

  test('two decisions on one line at once: exactly one applies', async ({ assert }) => {
    const { who, alice, bob } = await setUp()
    const { order, line } = await lateLine(who)
    const outcomes = await Promise.allSettled([
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: order.platformOrderId, ...ATTACH },
        alice.actor
      ),
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: order.platformOrderId, ...ATTACH },
        bob.actor
      ),
      creditMerchantFromLine(
        { statement_line_id: line.id, merchant_id: who.merchant.merchantId, ...CREDIT },
        bob.actor
      ),
      // The return applies at once only from the shell (the back-office asks an admin).
      returnStatementLine({ statement_line_id: line.id, ...RETURN }, cliActor()),
    ])
    const done = outcomes.filter((outcome) => outcome.status === 'fulfilled')
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
    assert.lengthOf(done, 1)
    assert.lengthOf(refused, 3)
    for (const outcome of refused) {
      const reason = (outcome as PromiseRejectedResult).reason
      assert.instanceOf(reason, ActionError)
      assert.include(reason.message, 'was already')
    }
    const movements = await db
      .from('ledger_transactions')
      .whereIn('kind', ['payment_late', 'statement_line_credit', 'statement_line_return'])
    assert.lengthOf(movements, 1)
    const decided = await lineRow(line.id)
    assert.isNotNull(decided.decision)
    const audits = [
      ...(await auditRows('statement_line.attach')),
      ...(await auditRows('statement_line.credit')),
      ...(await auditRows('statement_line.return')),
    ]
    assert.lengthOf(audits, 1)
    await assertBalancedLedger(assert)
  })

  test('an unmatched line attached to an open order pays it (PAID callback, line matched)', async ({
    assert,
  }) => {
    const { who, alice } = await setUp()
    const order = await createPayment(who, '250.00')
    // Arrived a day before the order existed: no slot covers it.
    const line = await receiveLine(order.depositAccountId, {
      amount: order.transferAmount,
      lineAt: DateTime.utc().minus({ days: 1 }).toJSDate(),
    })
    assert.equal(line.status, 'unmatched')

    const wrong = await createPayment(who, '99.00')
    const refused = await refusal(
      attachStatementLine(
        { statement_line_id: line.id, platform_order_id: wrong.platformOrderId, ...ATTACH },
        alice.actor
      )
    )
    assert.include(byField(refused).platform_order_id, 'expects 99.')

    const result = await attachStatementLine(
      {
        statement_line_id: line.id,
        platform_order_id: order.platformOrderId,
        reason_code: 'customer_confirmed',
        comment: 'customer sent the slip by email',
      },
      alice.actor
    )
    assert.equal(result.outcome, 'paid')
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.lengthOf(await postingsOf(order, 'payment_paid'), 1)
    const callbacks = await callbackRowsOf(order)
    assert.deepEqual(
      callbacks.map((row) => row.status),
      ['PAID']
    )
    const row = await lineRow(line.id)
    assert.equal(row.status, 'matched')
    assert.equal(row.order_type, 'payment')
    assert.equal(Number(row.order_id), order.id)
    assert.equal((await readMerchantBalance(who.merchant.id)).unsettleBalance, 25_000 - 250)
    await assertBalancedLedger(assert)
  })

  test('credit a merchant from an unmatched line; return another to the payer', async ({
    assert,
  }) => {
    const { who, account, alice } = await setUp()
    const credit = await receiveLine(account.id, { amount: 123_45 })
    const back = await receiveLine(account.id, { amount: 500_00 })
    assert.equal(credit.status, 'unmatched')

    const credited = await creditMerchantFromLine(
      { statement_line_id: credit.id, merchant_id: who.merchant.merchantId, ...CREDIT },
      alice.actor
    )
    assert.equal(credited.outcome, 'credited')
    // 1% of 123.45 THB = 1.23 THB (rounded as payments are).
    const fee = credited.outcome === 'credited' ? credited.fee : -1
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 123_45 - fee)

    // The typed account decides where the money goes: alice asks, an admin carries it out.
    const asked = await returnStatementLine({ statement_line_id: back.id, ...RETURN }, alice.actor)
    assert.equal(asked.outcome, 'approval_requested')
    assert.equal(asked.amount, 500_00)
    const carol = await operatorActor('carol@example.com', 'admin')
    await approveRequest({ approval_request_id: asked.request!.id }, carol.actor)
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 123_45 - fee, 'untouched')
    const legs = await db
      .from('ledger_transactions as t')
      .join('ledger_entries as e', 'e.transaction_id', 't.id')
      .join('ledger_accounts as a', 'a.id', 'e.account_id')
      .where('t.kind', 'statement_line_return')
      .select('a.code', 'a.owner', 'e.amount')
    assert.sameDeepMembers(
      legs.map((leg) => ({ code: leg.code, owner: leg.owner, amount: Number(leg.amount) })),
      [
        { code: 'deposit_clearing', owner: 'gateway', amount: -500_00 },
        { code: 'payout_clearing', owner: 'gateway', amount: 500_00 },
      ]
    )
    const row = await lineRow(back.id)
    assert.equal(row.decision, 'returned')
    assert.equal(row.return_account_no, '9876543210')

    const invalid = await refusal(
      returnStatementLine({ statement_line_id: credit.id, bank: 'XX', comment: '' }, alice.actor)
    )
    assert.properties(byField(invalid), ['bank', 'account_no', 'reason_code', 'comment'])
    await assertBalancedLedger(assert)
  })

  test('four eyes: above the threshold a credit waits for a second operator, re-checked on approval', async ({
    assert,
  }) => {
    const { who, account, alice, bob } = await setUp()
    await configurePlatform({ code: 'test', four_eyes_threshold: '50.00' }, cliActor())
    const line = await receiveLine(account.id, { amount: 80_00 })

    const asked = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchant.merchantId, ...CREDIT },
      alice.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    const request = asked.request!
    assert.equal(request.kind, 'line_decision')
    assert.equal(request.action, 'statement_line.credit_merchant')
    assert.equal(request.targetId, String(line.id))
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 0, 'nothing moved yet')

    // Any other decision on the line waits too.
    const other = await refusal(
      returnStatementLine({ statement_line_id: line.id, ...RETURN }, bob.actor)
    )
    assert.include(byField(other).general, `approval request #${request.id}`)
    const second = await refusal(
      creditMerchantFromLine(
        { statement_line_id: line.id, merchant_id: who.merchant.merchantId, ...CREDIT },
        bob.actor
      )
    )
    assert.include(byField(second).general, 'already pending')

    const own = await refusal(approveRequest({ approval_request_id: request.id }, alice.actor))
    assert.include(byField(own).general, 'another operator must approve')

    await approveRequest({ approval_request_id: request.id, comment: 'checked' }, bob.actor)
    const fee = 80 // 1% of 80.00 THB
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 80_00 - fee)
    const row = await lineRow(line.id)
    assert.equal(row.decision, 'credited')
    assert.equal(row.decided_by, bob.operator.id)
    const audit = await auditRows('statement_line.credit')
    assert.equal(audit[0].details.approval_request_id, request.id)

    // Attaching above the threshold opens a request as well.
    const { order, line: late } = await lateLine(who, '60.00')
    const attach = await attachStatementLine(
      { statement_line_id: late.id, platform_order_id: order.platformOrderId, ...ATTACH },
      alice.actor
    )
    assert.equal(attach.outcome, 'approval_requested')
    assert.lengthOf(await postingsOf(order, 'payment_late'), 0)
    await approveRequest({ approval_request_id: attach.request!.id }, bob.actor)
    assert.lengthOf(await postingsOf(order, 'payment_late'), 1)
    await assertBalancedLedger(assert)
  })

  test('ace commands run the same actions; ledger:verify agrees', async ({ assert }) => {
    const { who, account } = await setUp()
    const { order, line } = await lateLine(who)
    const credit = await receiveLine(account.id, { amount: 40_00 })
    const back = await receiveLine(account.id, { amount: 30_00 })

    const attached = await ace(
      'lines:attach',
      String(line.id),
      order.platformOrderId,
      '--reason=late_payment',
      '--comment=paid after expiry'
    )
    assert.equal(attached.code, 0, attached.output)
    assert.include(attached.output, `late payment of ${order.platformOrderId}: 99.00 THB credited`)
    const again = await ace(
      'lines:attach',
      String(line.id),
      order.platformOrderId,
      '--reason=late_payment',
      '--comment=paid after expiry'
    )
    assert.equal(again.code, 1)
    assert.include(again.output, `statement line #${line.id} was already attached by you at `)

    const credited = await ace(
      'lines:credit',
      String(credit.id),
      who.merchant.merchantId,
      '--reason=merchant_claimed',
      '--comment=claimed by email'
    )
    assert.equal(credited.code, 0, credited.output)
    const returned = await ace(
      'lines:return',
      String(back.id),
      '--bank=KTB',
      '--account-no=9876543210',
      '--account-name=Somchai Jaidee',
      '--reason=no_matching_order',
      '--comment=nobody claims it'
    )
    assert.equal(returned.code, 0, returned.output)
    assert.equal((await lineRow(back.id)).decision, 'returned')
    const verify = await ace('ledger:verify')
    assert.equal(verify.code, 0, verify.output)
  })
})
