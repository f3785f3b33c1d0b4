import { test } from '@japa/runner'
import { createHash, randomUUID } from 'node:crypto'
import { DateTime } from 'luxon'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import DepositAccount from '#payments/models/deposit_account'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { releasePayoutHold } from '#payouts/actions/complete_payout'
import { importStatement } from '#reconciliation/actions/import_statement'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { insertClaim, ReceiptClaimedError } from '#reconciliation/receipts'
import { verifyLedger } from '#ledger/verify'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'
import { refusal } from '#tests/helpers/actions'
import { operatorActor } from '#tests/helpers/decisions'
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
 * claims its line like any receipt.
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
