import { cliActor } from '#core/actor'
import { test } from '@japa/runner'
import { createHash, randomUUID } from 'node:crypto'
import { DateTime } from 'luxon'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { verifyReconciliation } from '#reconciliation/verify/index'
import PayoutOrder from '#payouts/models/payout_order'
import DepositAccount from '#payments/models/deposit_account'
import ApprovalRequest from '#approvals/models/approval_request'
import { approveRequest } from '#approvals/actions/approve_request'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { releasePayoutHold } from '#payouts/actions/complete_payout'
import { recordPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { requestPayoutRelease } from '#payouts/actions/release_rejected_payout'
import { importStatement } from '#reconciliation/actions/import_statement'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { insertClaim, ReceiptClaimedError } from '#reconciliation/receipts'
import { verifyLedger } from '#ledger/verify'
import { orderTimeline } from '#core/order_events'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'
import { ace } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import { auditRows, operatorActor } from '#tests/helpers/decisions'
import {
  authBody,
  createDepositAccount,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * Bulk-file payouts the bank did not carry out: a return on the statement
 * claims its line like any receipt; a rejection the bank told an operator
 * releases the payout once a second operator approves.
 */

let sequence = 0

/** A withdrawal through the bulk-file connector, dispatched (queue), with a notify_url. */
async function queuedPayout(who: TestMerchant, amount = '100.00') {
  sequence += 1
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, {
      ...PAYOUT_FIELDS,
      amount,
      merchant_order_id: `PR${sequence}`,
      notify_url: 'https://merchant.example.test/cb',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PayoutOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  await dispatchPayout(order.id)
  return order
}

/** Exports the queued bulk-file payouts: their files are at the bank (pending). */
async function exportFiles() {
  await exportBulkFile({ directory: app.tmpPath('test-payouts') }, TEST_ACTOR)
}

/** A withdrawal exported in a bank file: pending, at the bank, its hold held. */
async function payoutAtTheBank(who: TestMerchant, amount = '100.00') {
  const order = await queuedPayout(who, amount)
  await exportFiles()
  await order.refresh()
  if (order.status !== 'pending') throw new Error(`${order.platformOrderId} is ${order.status}`)
  return order
}

/** One statement line on the account, imported as a bank file; returns its row. */
async function importLine(
  accountId: number,
  line: { direction: 'credit' | 'debit'; amount: number; reference?: string }
) {
  sequence += 1
  const imported = await importStatement(
    {
      deposit_account_id: accountId,
      file_name: `payout-returns-${sequence}.csv`,
      content:
        'date_time,direction,amount,reference,description\n' +
        `${formatGatewayDateTime(new Date())},${line.direction},${formatAmount(line.amount)},${line.reference ?? ''},BULK ${sequence}\n`,
    },
    TEST_ACTOR
  )
  const row = await db.from('statement_lines').where('import_id', imported.importId).firstOrFail()
  return { ...row, id: Number(row.id), amount: Number(row.amount) }
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

function claimsOf(lineId: number) {
  return db.from('receipt_claims').where('statement_line_id', lineId)
}

function holdReturns(payout: PayoutOrder) {
  return db.from('ledger_transactions').where({
    kind: 'withdraw_hold_return',
    reference_type: 'withdraw',
    reference_id: payout.platformOrderId,
  })
}

function callbacksOf(payout: PayoutOrder) {
  return db
    .from('callback_outbox')
    .where({ order_type: 'withdraw', order_id: payout.id })
    .orderBy('id')
}

test.group('payout returns: the line is claimed by the return', (group) => {
  group.each.setup(() => resetDatabase())

  test('a payout returned by its line writes exactly one claim naming the line', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 5_00,
    })
    const account = await createDepositAccount()
    const payout = await payoutAtTheBank(who)
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 105, unsettle_balance: 0 })

    const line = await importLine(account.id, {
      direction: 'credit',
      amount: payout.amount,
      reference: payout.platformOrderId,
    })
    assert.equal(line.status, 'matched')
    await payout.refresh()
    assert.equal(payout.status, 'failed')
    assert.equal(payout.failureReason, 'returned_by_bank')
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })

    const claims = await db.from('receipt_claims')
    assert.lengthOf(claims, 1)
    const [claim] = claims
    assert.equal(Number(claim.statement_line_id), line.id)
    assert.equal(claim.path, 'payout_return')
    assert.equal(Number(claim.deposit_account_id), account.id)
    assert.equal(Number(claim.merchant_id), who.merchant.id)
    assert.isNull(claim.payment_order_id)
    assert.equal(Number(claim.expected_amount), 100_00)
    assert.equal(Number(claim.received_amount), 100_00)
    // The line brought the amount back; the fee returns with the hold, from the merchant's own money.
    assert.equal(Number(claim.credited), 100_00)
    assert.equal(Number(claim.fee), 0)
    assert.equal(claim.actor, 'system')
    const [posting] = await holdReturns(payout)
    assert.equal(Number(claim.ledger_transaction_id), Number(posting.id))
    assert.deepEqual((await verifyLedger()).drifts, [])
    // The returned money stays in deposit_clearing, and reconciliation says so without a problem.
    assert.deepEqual((await verifyReconciliation()).problems, [])
  })

  test('the line of a return cannot be claimed again by another path: refused naming the return', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const payout = await payoutAtTheBank(who)
    const line = await importLine(account.id, {
      direction: 'credit',
      amount: payout.amount,
      reference: payout.platformOrderId,
    })
    const { actor: alice } = await operatorActor('alice@example.com')
    const taken = `statement line #${line.id} was already claimed: a payout's transfer returned by the bank, its hold given back to merchant ${who.merchantId} by system at `

    // An operator credits the line to a merchant: refused, the return named.
    const credited = await refusal(
      creditMerchantFromLine(
        {
          statement_line_id: line.id,
          merchant_id: who.merchantId,
          reason_code: 'merchant_claimed',
          comment: 'the merchant says it is a deposit',
        },
        alice
      )
    )
    assert.include(credited.message, taken)
    assert.include(credited.message, `, statement line #${line.id}`)

    // Any path writing a claim on the line fails on its key, whatever checks it made.
    const second = await db
      .transaction((trx) =>
        insertClaim(trx, {
          depositAccountId: account.id,
          statementLineId: line.id,
          path: 'merchant_credit',
          actor: alice,
          merchantId: who.merchant.id,
          expectedAmount: line.amount,
          credited: line.amount,
        })
      )
      .then(
        () => null,
        (error) => error
      )
    assert.instanceOf(second, ReceiptClaimedError)
    assert.include(second.message, taken)

    assert.lengthOf(await claimsOf(line.id), 1)
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a return whose line another decision took first is not settled: the payout keeps its hold', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const payout = await payoutAtTheBank(who)
    // Stored, not matched yet; meanwhile another decision claims it.
    const deposit = await DepositAccount.findOrFail(account.id)
    const stored = await db.transaction((trx) =>
      storeStatement(trx, {
        account: deposit,
        layout: 'sandbox',
        fileName: `test-${randomUUID()}`,
        fileSha256: createHash('sha256').update(randomUUID()).digest('hex'),
        lines: [
          {
            lineNumber: 1,
            lineAt: new Date(),
            direction: 'credit',
            amount: payout.amount,
            reference: payout.platformOrderId,
            transRef: null,
            description: 'RETURNED TRANSFER',
          },
        ],
        actor: TEST_ACTOR,
      })
    )
    const line = await db.from('statement_lines').where('import_id', stored.importId).firstOrFail()
    await db.transaction((trx) =>
      insertClaim(trx, {
        depositAccountId: account.id,
        statementLineId: Number(line.id),
        path: 'return',
        actor: { name: 'operator:carol@example.com' },
        expectedAmount: payout.amount,
      })
    )
    await matchImport(account.id, stored.importId)

    const after = await db.from('statement_lines').where('id', line.id).firstOrFail()
    assert.equal(after.status, 'unmatched')
    assert.include(
      after.note,
      `${payout.platformOrderId}: statement line #${line.id} was already claimed: returned to the payer by operator:carol@example.com`
    )
    await payout.refresh()
    assert.equal(payout.status, 'pending')
    assert.equal(payout.holdState, 'held')
    assert.lengthOf(await claimsOf(Number(line.id)), 1)
    assert.deepEqual(await balance(who), { balance: 900, freeze_balance: 100, unsettle_balance: 0 })
  })

  test('a return after the hold was released gives the merchant nothing back: its claim credits nothing', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const payout = await queuedPayout(who)
    // Queued past the hold period (not at the bank yet): the hold went back to the balance.
    assert.isTrue(await releasePayoutHold(payout.id, DateTime.utc().plus({ hours: 1 })))
    await exportFiles()
    const line = await importLine(account.id, {
      direction: 'credit',
      amount: payout.amount,
      reference: payout.platformOrderId,
    })
    assert.equal(line.status, 'matched')
    const [claim] = await claimsOf(line.id)
    assert.equal(claim.path, 'payout_return')
    assert.equal(Number(claim.credited), 0)
    assert.isNull(claim.ledger_transaction_id)
    assert.lengthOf(await holdReturns(payout), 0)
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
  })
})

test.group('payouts the bank rejected: released by two operators', (group) => {
  group.each.setup(() => resetDatabase())

  async function setUp() {
    const who = await createPayoutMerchant(1000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 5_00,
    })
    const account = await createDepositAccount()
    const payout = await payoutAtTheBank(who)
    const alice = await operatorActor('alice@example.com')
    const bob = await operatorActor('bob@example.com')
    return { who, account, payout, alice: alice.actor, bob: bob.actor }
  }

  const REASON = 'KBank bulk transfer report: account closed (case 4411)'

  test('asked by one operator, approved by another: the payout fails and its hold returns once', async ({
    assert,
  }) => {
    const { who, payout, alice, bob } = await setUp()
    // For comparison: a payout failed by the bank's answer recorded by hand (from the shell: at once).
    const other = await payoutAtTheBank(who, '50.00')
    await recordPayoutOutcome(
      { platform_order_id: other.platformOrderId, outcome: 'failed', reason: 'account_closed' },
      cliActor()
    )
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 105, unsettle_balance: 0 })

    const { request } = await requestPayoutRelease(
      { platform_order_id: payout.platformOrderId, reason: REASON },
      alice
    )
    assert.equal(request.status, 'pending')
    assert.equal(request.action, 'payout.release_rejected')
    assert.equal(request.kind, 'payout_release')
    assert.equal(request.targetType, 'withdraw')
    assert.equal(request.targetId, payout.platformOrderId)
    assert.equal(request.amount, 105_00)
    assert.equal(request.comment, REASON)
    // Nothing moves on one person's word.
    await payout.refresh()
    assert.equal(payout.status, 'pending')
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 105, unsettle_balance: 0 })
    assert.lengthOf(await callbacksOf(payout), 0)
    const [asked] = await auditRows('approval.request')
    assert.equal(asked.actor, 'operator:alice@example.com')
    assert.equal(asked.comment, REASON)

    // A second request on the same payout waits for the first.
    const twice = await refusal(
      requestPayoutRelease({ platform_order_id: payout.platformOrderId, reason: 'again' }, bob)
    )
    assert.include(twice.message, `approval request #${request.id}`)
    assert.include(twice.message, 'is already pending')
    // So does the bank's answer by hand.
    const byHand = await refusal(
      recordPayoutOutcome(
        { platform_order_id: payout.platformOrderId, outcome: 'failed', reason: 'x' },
        bob
      )
    )
    assert.include(byField(byHand).platform_order_id, `approval request #${request.id}`)

    const approved = await approveRequest(
      { approval_request_id: request.id, reason_code: 'bank_confirmed', comment: 'Called KBank' },
      bob
    )
    assert.equal(approved.status, 'approved')
    await payout.refresh()
    assert.equal(payout.status, 'failed')
    assert.equal(payout.failureReason, 'rejected_by_bank')
    assert.equal(payout.holdState, 'returned')
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
    assert.lengthOf(await holdReturns(payout), 1)
    assert.deepEqual((await verifyLedger()).drifts, [])

    // The merchant's FAIL callback, as for a failure recorded by hand.
    const callbacks = await callbacksOf(payout)
    assert.lengthOf(callbacks, 1)
    const [expected] = await callbacksOf(other)
    assert.equal(callbacks[0].status, 'FAIL')
    assert.equal(callbacks[0].notify_url, expected.notify_url)
    const body = JSON.parse(callbacks[0].body)
    assert.deepEqual(Object.keys(body).sort(), Object.keys(JSON.parse(expected.body)).sort())
    assert.equal(body.status, 'FAIL')
    assert.equal(body.platform_order_id, payout.platformOrderId)

    const [released] = await auditRows('payout.release_rejected')
    assert.equal(released.actor, 'operator:bob@example.com')
    assert.equal(released.reason_code, 'rejected_by_bank')
    assert.equal(released.comment, REASON)
    assert.equal(released.details.requested_by, 'operator:alice@example.com')
    assert.equal(released.details.approval_request_id, request.id)
    assert.equal(released.details.returned_to_balance, 105_00)
    assert.deepEqual(released.before_values, {
      status: 'pending',
      hold_state: 'held',
      failure_reason: null,
    })
    assert.deepEqual(released.after_values, {
      status: 'failed',
      hold_state: 'returned',
      failure_reason: 'rejected_by_bank',
    })
    const events = await orderTimeline('withdraw', payout.id)
    const last = events[events.length - 1]
    assert.equal(last.toStatus, 'failed')
    assert.equal(last.actor, 'operator:bob@example.com')
    assert.include(last.reason, REASON)
    assert.include(
      last.reason,
      `approval request #${request.id}, asked by operator:alice@example.com`
    )

    // Approving again applies nothing more.
    const carol = await operatorActor('carol@example.com')
    const again = await refusal(approveRequest({ approval_request_id: request.id }, carol.actor))
    assert.include(again.message, `approval request #${request.id} was already approved by`)
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
    assert.lengthOf(await holdReturns(payout), 1)
    assert.lengthOf(await callbacksOf(payout), 1)
  })

  test('the requester cannot approve their own request', async ({ assert }) => {
    const { who, payout, alice } = await setUp()
    const { request } = await requestPayoutRelease(
      { platform_order_id: payout.platformOrderId, reason: REASON },
      alice
    )
    const own = await refusal(approveRequest({ approval_request_id: request.id }, alice))
    assert.include(
      own.message,
      `you asked for approval request #${request.id}: another operator must approve it`
    )
    await payout.refresh()
    assert.equal(payout.status, 'pending')
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'pending')
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 105, unsettle_balance: 0 })
  })

  test('a debit line arriving before the approval makes it refused', async ({ assert }) => {
    const { who, account, payout, alice, bob } = await setUp()
    const { request } = await requestPayoutRelease(
      { platform_order_id: payout.platformOrderId, reason: REASON },
      alice
    )
    // The bank did send it after all: its debit completes the payout.
    const debit = await importLine(account.id, {
      direction: 'debit',
      amount: payout.amount,
      reference: payout.platformOrderId,
    })
    assert.equal(debit.status, 'matched')
    const refused = await refusal(approveRequest({ approval_request_id: request.id }, bob))
    assert.include(refused.message, `approval request #${request.id} can no longer be carried out`)
    assert.include(refused.message, `${payout.platformOrderId} is success`)
    await payout.refresh()
    assert.equal(payout.status, 'success')
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'pending')
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 0, unsettle_balance: 0 })
    assert.lengthOf(await holdReturns(payout), 0)
    assert.deepEqual(
      (await callbacksOf(payout)).map((row) => row.status),
      ['SUCCESS']
    )
  })

  test('a debit naming the payout with another amount waits for an operator: the release is refused naming it', async ({
    assert,
  }) => {
    const { who, account, payout, alice, bob } = await setUp()
    const { request } = await requestPayoutRelease(
      { platform_order_id: payout.platformOrderId, reason: REASON },
      alice
    )
    const debit = await importLine(account.id, {
      direction: 'debit',
      amount: 99_00,
      reference: payout.platformOrderId,
    })
    assert.equal(debit.status, 'unmatched')
    const refused = await refusal(approveRequest({ approval_request_id: request.id }, bob))
    assert.include(
      refused.message,
      `statement line #${debit.id}, a debit of 99.00 THB naming ${payout.platformOrderId}`
    )
    await payout.refresh()
    assert.equal(payout.status, 'pending')
    assert.deepEqual(await balance(who), { balance: 895, freeze_balance: 105, unsettle_balance: 0 })
    // And no new request while the line waits.
    const asked = await refusal(
      requestPayoutRelease({ platform_order_id: payout.platformOrderId, reason: REASON }, bob)
    )
    assert.include(byField(asked).platform_order_id, `statement line #${debit.id}`)
  })

  test('only a bulk-file payout at the bank, with a reason: refused otherwise, from the command line too', async ({
    assert,
  }) => {
    const { who, payout, alice } = await setUp()
    const queued = await queuedPayout(who, '20.00')
    const notExported = await refusal(
      requestPayoutRelease({ platform_order_id: queued.platformOrderId, reason: REASON }, alice)
    )
    assert.equal(
      byField(notExported).platform_order_id,
      `${queued.platformOrderId} is queue: its bulk file has not been handed to the bank, nothing is at the bank to release`
    )
    const viaApi = await createPayoutMerchant(1000_00)
    const sandbox = await queuedPayout(viaApi)
    await sandbox.refresh()
    const direct = await refusal(
      requestPayoutRelease({ platform_order_id: sandbox.platformOrderId, reason: REASON }, alice)
    )
    assert.include(
      byField(direct).platform_order_id,
      `${sandbox.platformOrderId} is not a bulk-file payout (route sandbox)`
    )
    const noReason = await refusal(
      requestPayoutRelease({ platform_order_id: payout.platformOrderId, reason: '  ' }, alice)
    )
    assert.include(byField(noReason).reason, 'reason is required')

    const missing = await ace('payouts:release-rejected', payout.platformOrderId)
    assert.equal(missing.code, 1)
    assert.include(missing.output, 'reason is required')
    const asked = await ace('payouts:release-rejected', payout.platformOrderId, '--reason', REASON)
    assert.equal(asked.code, 0, asked.output)
    const request = await ApprovalRequest.query()
      .where('action', 'payout.release_rejected')
      .firstOrFail()
    assert.include(asked.output, `approval request #${request.id} opened`)
    assert.match(request.requestedByActor, /^cli:/)
    assert.isNull(request.requestedBy)
    await payout.refresh()
    assert.equal(payout.status, 'pending', 'the command line only asks')
    const failed = await ace('payouts:release-rejected', queued.platformOrderId, '--reason', 'x')
    assert.equal(failed.code, 1)
    assert.include(failed.output, 'nothing is at the bank to release')
  })
})
