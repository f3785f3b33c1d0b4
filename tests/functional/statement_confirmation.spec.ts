import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import PaymentOrder from '#payments/models/payment_order'
import { importStatement } from '#reconciliation/actions/import_statement'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { approveRequest } from '#approvals/actions/approve_request'
import { rejectRequest } from '#approvals/actions/reject_request'
import { expireDueApprovalRequests } from '#approvals/approval_requests'
import { formatAmount } from '#core/money'
import type { Actor } from '#core/actor'
import { refusal } from '#tests/helpers/actions'
import { ace } from '#tests/helpers/ace'
import { auditRows, balanceOf, createPayment, operatorActor } from '#tests/helpers/decisions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  updatePlatforms,
} from '#tests/helpers/merchants'

/**
 * No money on one person's file: a statement imported by hand whose lines
 * would move more than a platform's four-eyes threshold waits for a second
 * operator; below it, it runs at once. A transfer already on another
 * account's statement refuses the file.
 */

const HEADER = 'date_time,direction,amount,reference,description,trans_ref\n'

function bangkok(at: DateTime) {
  return at.setZone('UTC+7').toFormat('yyyy-LL-dd HH:mm:ss')
}

function importFile(account: DepositAccount, content: string, actor: Actor) {
  return importStatement(
    { deposit_account_id: account.id, file_name: 'by-hand.csv', content },
    actor
  )
}

/** One credit naming the order, as a hand-made file would carry it. */
function creditFor(order: PaymentOrder, transRef: string) {
  const at = DateTime.utc().minus({ seconds: 30 })
  return `${HEADER}${bangkok(at)},credit,${formatAmount(order.transferAmount)},${order.paymentReference ?? order.platformOrderId},FROM SOMCHAI,${transRef}\n`
}

async function bankPostings(importId: number) {
  return db
    .from('ledger_transactions')
    .where('idempotency_key', 'like', `bank_statement:${importId}:%`)
    .count('* as total')
    .first()
    .then((row) => Number(row.total))
}

test.group('a statement imported by hand', (group) => {
  group.each.setup(() => resetDatabase())

  test('above the threshold, one operator’s file pays nothing until a second operator confirms it; the importer cannot', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '2500.00')
    const importer = await operatorActor('importer@example.test')
    const second = await operatorActor('second@example.test')

    const summary = await importFile(account, creditFor(order, 'HANDMADE0001'), importer.actor)
    assert.deepInclude(summary, { lines: 1, newLines: 1 })
    assert.deepEqual(summary.results, { matched: 0, unmatched: 0, late: 0, skipped: 0 })
    assert.isNotNull(summary.confirmation)
    assert.equal(summary.confirmation!.action, 'statement.confirm')
    assert.equal(summary.confirmation!.amount, order.transferAmount)

    // Kept and visible, but it moved nothing: the order is open, the merchant has nothing,
    // and the ledger's bank account has not taken the file.
    const imported = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(imported.status, 'awaiting_confirmation')
    assert.equal(Number(imported.moves_amount), order.transferAmount)
    const [line] = await db.from('statement_lines').where('import_id', summary.importId)
    assert.equal(line.status, 'held')
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'open')
    assert.deepEqual(await balanceOf(who), { balance: 0, freeze_balance: 0, unsettle_balance: 0 })
    assert.equal(await bankPostings(summary.importId), 0)
    // A held file is not the bank's word yet: reconciliation does not count it.
    assert.deepEqual((await verifyReconciliation()).problems, [])

    const own = await refusal(
      approveRequest(
        { approval_request_id: summary.confirmation!.id, comment: 'mine' },
        importer.actor
      )
    )
    assert.match(own.errors[0].message, /another operator must approve it/)

    await approveRequest(
      { approval_request_id: summary.confirmation!.id, comment: 'seen in KBiz' },
      second.actor
    )
    const paid = await PaymentOrder.findOrFail(order.id)
    assert.equal(paid.status, 'unsettled_paid')
    const after = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(after.status, 'confirmed')
    assert.match(after.decided_by, /second/)
    assert.equal((await db.from('statement_lines').where('id', line.id).first()).status, 'matched')
    assert.equal(await bankPostings(summary.importId), 1)
    assert.deepEqual((await verifyReconciliation()).problems, [])
    const [audit] = await auditRows('statement.confirm')
    assert.include(audit.details, { import_id: summary.importId, matched: 1 })

    // Approving again changes nothing.
    await refusal(
      approveRequest(
        { approval_request_id: summary.confirmation!.id, comment: 'again' },
        second.actor
      )
    )
    assert.equal(await bankPostings(summary.importId), 1)
  })

  test('at or below the threshold the file runs as it always did', async ({ assert }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 500_000 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '2500.00')
    const importer = await operatorActor('importer@example.test')

    const summary = await importFile(account, creditFor(order, 'SMALL0001'), importer.actor)
    assert.isNull(summary.confirmation)
    assert.equal(summary.results.matched, 1)
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'unsettled_paid')
    const imported = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(imported.status, 'confirmed')
  })

  test('turned down by a second operator: the file and its lines stay, discarded, and the genuine file of the same transfer imports', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '2500.00')
    const importer = await operatorActor('importer@example.test')
    const second = await operatorActor('second@example.test')
    const content = creditFor(order, 'DISCARD0001')

    const summary = await importFile(account, content, importer.actor)
    await rejectRequest(
      {
        approval_request_id: summary.confirmation!.id,
        reason_code: 'insufficient_evidence',
        comment: 'not in the bank portal',
      },
      second.actor
    )
    const imported = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(imported.status, 'discarded')
    assert.match(imported.discard_reason, /not in the bank portal/)
    const [line] = await db.from('statement_lines').where('import_id', summary.importId)
    assert.equal(line.status, 'discarded')
    assert.isNull(line.transfer_key)
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'open')
    assert.deepEqual((await verifyReconciliation()).problems, [])

    // The same transfer, from the bank this time: a new line, waiting for its own confirmation.
    const again = await importFile(account, content, second.actor)
    assert.equal(again.newLines, 1)
    assert.isNotNull(again.confirmation)
  })

  test('nobody confirms it before the request expires: the worker’s sweep discards the file, and says why', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '2500.00')
    const importer = await operatorActor('importer@example.test')

    const summary = await importFile(account, creditFor(order, 'EXPIRE0001'), importer.actor)
    assert.equal(await expireDueApprovalRequests(DateTime.utc().plus({ hours: 1 })), 0)
    assert.equal(await expireDueApprovalRequests(DateTime.utc().plus({ days: 2 })), 1)
    const imported = await db.from('statement_imports').where('id', summary.importId).first()
    assert.equal(imported.status, 'discarded')
    assert.equal(imported.discard_reason, 'nobody confirmed it before the request expired')
    const [line] = await db.from('statement_lines').where('import_id', summary.importId)
    assert.equal(line.status, 'discarded')
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'open')
    const [audit] = await auditRows('statement.discard')
    assert.include(audit.details, { import_id: summary.importId })
  })

  test('a transfer already on another account’s statement refuses the file, naming that account', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const first = await createDepositAccount()
    const other = await createDepositAccount()
    const order = await createPayment(who, '1234.00')
    const importer = await operatorActor('importer@example.test')
    const content = creditFor(order, 'ONEACCOUNT01')

    await importFile(first, content, importer.actor)
    const error = await refusal(importFile(other, content, importer.actor))
    assert.match(
      error.errors[0].message,
      new RegExp(
        `^Nothing imported: by-hand\\.csv, neutral: the credit of 1,234\\.\\d\\d THB \\(bank reference ONEACCOUNT01\\) is already on the statement of deposit account ${first.id} `
      )
    )
    assert.lengthOf(await db.from('statement_lines').where('deposit_account_id', other.id), 0)
    assert.lengthOf(await db.from('statement_imports').where('deposit_account_id', other.id), 0)
  })

  test('statements:import says the file waits and for which request', async ({ assert }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '2500.00')
    const { writeFile, mkdtemp } = await import('node:fs/promises')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const dir = await mkdtemp(join(tmpdir(), 'statement-'))
    const file = join(dir, 'by-hand.csv')
    await writeFile(file, creditFor(order, 'CLI0001'))

    const result = await ace('statements:import', file, '--account', String(account.id))
    assert.equal(result.code, 0, result.output)
    assert.match(
      result.output,
      /1 lines, 1 new: waiting for a second operator \(approval request #\d+\): it would move 2,500\.\d\d THB/
    )
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'open')
  })
})
