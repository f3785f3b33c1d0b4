import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { postLedgerTransaction, readMerchantBalance } from '#ledger/ledger'
import { InsufficientBalanceError, LedgerImbalanceError } from '#ledger/errors'
import { createTestMerchant, creditMerchant, resetDatabase } from '#tests/helpers/merchants'

async function entrySums(merchantId: number) {
  const rows = await db
    .from('ledger_entries')
    .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
    .where('ledger_accounts.merchant_id', merchantId)
    .groupBy('ledger_accounts.code')
    .select('ledger_accounts.code')
    .sum('ledger_entries.amount as total')
  return Object.fromEntries(rows.map((row) => [row.code, Number(row.total)]))
}

test.group('ledger', (group) => {
  group.each.setup(() => resetDatabase())

  test('refuses postings whose entries do not sum to zero', async ({ assert }) => {
    const { merchant } = await createTestMerchant()
    await assert.rejects(
      () =>
        db.transaction((trx) =>
          postLedgerTransaction(trx, {
            kind: 'broken',
            legs: [
              { gateway: 'adjustments', amount: -100 },
              { merchantId: merchant.id, account: 'available', amount: 101 },
            ],
          })
        ),
      LedgerImbalanceError
    )
    const count = await db.from('ledger_entries').count('* as total').first()
    assert.equal(Number(count.total), 0)
  })

  test('the projection equals the sum of the entries', async ({ assert }) => {
    const { merchant } = await createTestMerchant()
    await creditMerchant(merchant, 'available', 150_00)
    await creditMerchant(merchant, 'unsettled', 20_55)
    await db.transaction((trx) =>
      postLedgerTransaction(trx, {
        kind: 'hold',
        legs: [
          { merchantId: merchant.id, account: 'available', amount: -50_00 },
          { merchantId: merchant.id, account: 'frozen', amount: 50_00 },
        ],
        nonNegative: ['available'],
      })
    )
    const balance = await readMerchantBalance(merchant.id)
    assert.deepEqual(balance, { balance: 100_00, freezeBalance: 50_00, unsettleBalance: 20_55 })
    assert.deepEqual(await entrySums(merchant.id), {
      available: 100_00,
      frozen: 50_00,
      unsettled: 20_55,
    })
  })

  test('a guarded account never goes below zero and nothing is written', async ({ assert }) => {
    const { merchant } = await createTestMerchant()
    await creditMerchant(merchant, 'available', 10_00)
    await assert.rejects(
      () =>
        db.transaction((trx) =>
          postLedgerTransaction(trx, {
            kind: 'hold',
            legs: [
              { merchantId: merchant.id, account: 'available', amount: -10_01 },
              { merchantId: merchant.id, account: 'frozen', amount: 10_01 },
            ],
            nonNegative: ['available'],
          })
        ),
      InsufficientBalanceError
    )
    assert.deepEqual(await readMerchantBalance(merchant.id), {
      balance: 10_00,
      freezeBalance: 0,
      unsettleBalance: 0,
    })
    const count = await db.from('ledger_transactions').count('* as total').first()
    assert.equal(Number(count.total), 1) // only the credit
  })

  test('two transactions opening the same gateway account at once both post', async ({
    assert,
  }) => {
    // resetDatabase leaves no gateway account: both postings must open fee_revenue.
    await db.from('ledger_accounts').where('owner', 'gateway').delete()
    const first = await db.transaction()
    const second = await db.transaction()
    try {
      // The second transaction's snapshot is taken before the first opens the account.
      await second.from('ledger_accounts').count('* as total')
      await postLedgerTransaction(first, {
        kind: 'test_open',
        idempotencyKey: 'test_open:1',
        legs: [
          { gateway: 'fee_revenue', amount: 100 },
          { gateway: 'adjustments', amount: -100 },
        ],
      })
      // Its INSERT IGNORE waits for the first transaction, which commits meanwhile.
      const posting = postLedgerTransaction(second, {
        kind: 'test_open',
        idempotencyKey: 'test_open:2',
        legs: [
          { gateway: 'fee_revenue', amount: 200 },
          { gateway: 'adjustments', amount: -200 },
        ],
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await first.commit()
      await posting
      await second.commit()
    } finally {
      if (!first.isCompleted) await first.rollback()
      if (!second.isCompleted) await second.rollback()
    }
    const sums = await db
      .from('ledger_entries')
      .join('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
      .where('ledger_accounts.owner', 'gateway')
      .groupBy('ledger_accounts.code')
      .select('ledger_accounts.code')
      .sum('ledger_entries.amount as total')
    assert.deepEqual(Object.fromEntries(sums.map((row) => [row.code, Number(row.total)])), {
      fee_revenue: 300,
      adjustments: -300,
    })
  })
})
