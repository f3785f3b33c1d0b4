import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { postLedgerTransaction } from '#ledger/ledger'
import {
  authBody,
  createTestMerchant,
  creditMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

test.group('POST /balance', (group) => {
  group.each.setup(() => resetDatabase())

  test('a new merchant has three zero figures with two decimals', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await signedPost('/balance', who, authBody(who))
    assert.equal(response.status, 200)
    assert.include(
      response.text,
      '"data":{"balance":0.00,"freeze_balance":0.00,"unsettle_balance":0.00}'
    )
  })

  test('figures come from the seeded ledger', async ({ assert }) => {
    const who = await createTestMerchant()
    const other = await createTestMerchant()
    await creditMerchant(who.merchant, 'available', 1_234_567_89)
    await creditMerchant(who.merchant, 'unsettled', 5_05)
    await creditMerchant(other.merchant, 'available', 99_99)
    // A hold moves money from balance to freeze_balance.
    await db.transaction((trx) =>
      postLedgerTransaction(trx, {
        kind: 'withdraw_hold',
        legs: [
          { merchantId: who.merchant.id, account: 'available', amount: -100_50 },
          { merchantId: who.merchant.id, account: 'frozen', amount: 100_50 },
        ],
        nonNegative: ['available'],
      })
    )
    const response = await signedPost('/balance', who, authBody(who))
    assert.equal(response.status, 200, response.text)
    assert.include(
      response.text,
      '"data":{"balance":1234467.39,"freeze_balance":100.50,"unsettle_balance":5.05}'
    )
    assert.deepEqual(response.json.data, {
      balance: 1234467.39,
      freeze_balance: 100.5,
      unsettle_balance: 5.05,
    })
  })
})
