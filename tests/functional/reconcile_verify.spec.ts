import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { postLedgerTransaction } from '#ledger/ledger'
import { paymentPaidPosting } from '#ledger/recipes'
import { verifyReconciliation } from '#reconciliation/verify'
import { ace } from '#tests/helpers/ace'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { createPayment } from '#tests/helpers/decisions'
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
