import { cliActor } from '#core/actor'
import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { upgradeReceipts } from '#database/migrations/1763700000101_receipts_for_existing_money'
import { upgradePayoutConfirmations } from '#database/migrations/1763700000102_payout_confirmations'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { expirePayment } from '#payments/actions/expire_payment'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { attachStatementLine } from '#reconciliation/actions/attach_statement_line'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { verifyLedger } from '#ledger/verify'
import { ace } from '#tests/helpers/ace'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { createPayment, operatorActor } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'
import { sandboxTransRef } from '#tests/helpers/slips'

/**
 * An installation from before bank money was in the ledger: its tables as
 * that version left them (no claims, no bank postings, every credit taken
 * from deposit_clearing), upgraded by the migration's own function.
 */

const WHY = { reason_code: 'other', comment: 'decided before the upgrade' }

/** Rewinds the tables to what the previous version wrote for the same history. */
async function asBeforeTheUpgrade() {
  const ids = (rows: Array<{ id: number | string }>) => rows.map((row) => row.id)
  const added = ids(
    await db
      .from('ledger_transactions')
      .whereIn('kind', ['bank_statement', 'receivable_cleared'])
      .select('id')
  )
  await db.from('receipt_claims').delete()
  await db.from('payout_confirmations').delete()
  if (added.length > 0) {
    await db.from('ledger_entries').whereIn('transaction_id', added).delete()
    await db.from('ledger_transactions').whereIn('id', added).delete()
  }
  const account = async (code: string) => {
    await db.rawQuery(
      "INSERT IGNORE INTO ledger_accounts (owner, code, created_at) VALUES ('gateway', ?, NOW())",
      [code]
    )
    return (await db.from('ledger_accounts').where({ owner: 'gateway', code }).firstOrFail()).id
  }
  await db
    .from('ledger_entries')
    .where('account_id', await account('deposit_receivable'))
    .update({ account_id: await account('deposit_clearing') })
  await db.from('ledger_accounts').where('owner', 'gateway').whereRaw("code LIKE 'bank:%'").delete()
  await db.from('statement_lines').update({ trans_ref: null })
  await db.from('payment_orders').update({ paid_amount: null })
}

test.group('upgrading an installation with money already moved', (group) => {
  group.each.setup(() => resetDatabase())

  test('lines given away become claims, credits without a line receivables; verify names what does not fit', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor

    const matched = await createPayment(who, '100.00')
    await receiveLine(account.id, { amount: matched.transferAmount })
    const markedPaid = await createPayment(who, '200.00')
    await markPaymentPaid(
      {
        platform_order_id: markedPaid.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'phoned',
      },
      alice
    )
    const credited = await receiveLine(account.id, { amount: 33_300 })
    await creditMerchantFromLine(
      { statement_line_id: credited.id, merchant_id: who.merchantId, ...WHY },
      alice
    )
    const returned = await receiveLine(account.id, { amount: 44_400 })
    await returnStatementLine(
      {
        statement_line_id: returned.id,
        bank: 'KTB',
        account_no: '1234567890',
        account_name: 'Somchai Jaidee',
        ...WHY,
      },
      // From the shell: applied at once (the back-office waits for an admin).
      cliActor()
    )
    const expired = await createPayment(who, '300.00')
    await expirePayment(expired.id, DateTime.utc().plus({ days: 1 }))
    const late = await receiveLine(account.id, {
      amount: expired.transferAmount,
      reference: expired.platformOrderId,
    })
    await attachStatementLine(
      { statement_line_id: late.id, platform_order_id: expired.platformOrderId, ...WHY },
      alice
    )
    await receiveLine(account.id, { amount: 5_500 }) // nobody's yet
    const balanceBefore = await db.from('merchant_balances').firstOrFail()

    await asBeforeTheUpgrade()
    assert.deepEqual((await verifyLedger()).drifts, [], 'the old ledger balanced with itself')
    assert.isFalse((await verifyReconciliation()).ok, 'but not with the bank')

    await upgradeReceipts(db.connection())
    await upgradePayoutConfirmations(db.connection())
    await upgradeReceipts(db.connection()) // idempotent
    await upgradePayoutConfirmations(db.connection())
    const report = await verifyReconciliation()
    assert.deepEqual(report.problems, [])
    assert.lengthOf(report.openReceivables, 1)
    // The line returned to its payer: its transfer waits for the debit line.
    assert.deepEqual(
      report.openTransfers.map((item) => [item.path, item.returnedLineId]),
      [['return', returned.id]]
    )
    assert.equal(report.openReceivables[0].platformOrderId, markedPaid.platformOrderId)
    assert.equal(report.unclaimed.amount, 5_500)
    const paths = (await db.from('receipt_claims').orderBy('id').select('path')).map((r) => r.path)
    assert.sameMembers(paths, ['match', 'merchant_credit', 'return', 'late_credit', 'upgrade'])
    // Nothing a merchant holds changed.
    assert.deepEqual(await db.from('merchant_balances').firstOrFail(), balanceBefore)
    assert.deepEqual((await verifyLedger()).drifts, [])

    // Past the window, the receivable is reported until an operator finds its line.
    const later = await verifyReconciliation({ now: new Date(Date.now() + 2 * 86_400_000) })
    assert.deepEqual(
      later.problems.map((problem) => problem.kind),
      ['stale_receivable']
    )
    const fromCli = await ace('reconcile:verify')
    assert.equal(fromCli.code, 0, fromCli.output)
  })

  test('one transfer credited twice before the upgrade: verify names both claims on its line', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    const alice = (await operatorActor('alice@example.com')).actor
    const order = await createPayment(who, '150.00')
    const transRef = sandboxTransRef()
    // The previous version: the slip approved (no line yet) ...
    await markPaymentPaid(
      { platform_order_id: order.platformOrderId, reason_code: 'slip_verified', comment: 'slip' },
      alice
    )
    await asBeforeTheUpgrade()
    await db.from('receipt_claims').delete()
    // ... then its line (another amount: the customer sent less) credited to the merchant too.
    // The previous version kept a transfer's reference in the line's reference.
    const line = await receiveLine(account.id, { amount: 14_900, reference: transRef })
    await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchantId, ...WHY },
      alice
    )
    await asBeforeTheUpgrade()
    // The approved slip named that transfer.
    const [slipId] = await db.table('payment_slips').insert({
      payment_order_id: order.id,
      merchant_id: who.merchant.id,
      source: 'payment_page',
      storage_key: 'slips/none.png',
      sha256: '0'.repeat(64),
      byte_size: 1,
      mime: 'image/png',
      trans_ref: transRef,
      verification_status: 'failed',
      verification_msg: 'amount mismatch.',
      verification: '{}',
      review_decision: 'approved',
      checked_at: new Date(),
      created_at: new Date(),
      updated_at: new Date(),
    })
    assert.isAbove(Number(slipId), 0)

    await upgradeReceipts(db.connection())
    const report = await verifyReconciliation()
    assert.deepEqual(
      report.problems.map((problem) => problem.kind),
      ['receipt_claimed_twice']
    )
    assert.include(
      report.problems[0].detail,
      `statement line #${line.id} is the transfer ${transRef}`
    )
    const fromCli = await ace('reconcile:verify')
    assert.equal(fromCli.code, 1)
    assert.include(fromCli.output, 'receipt_claimed_twice')
  })
})
