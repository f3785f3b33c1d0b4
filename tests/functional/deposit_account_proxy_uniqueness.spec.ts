import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/actor'
import { ActionError } from '#core/validation'
import DepositAccount from '#payments/models/deposit_account'
import { createDepositAccount } from '#payments/actions/create_deposit_account'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { resetDatabase } from '#tests/helpers/merchants'
import { byField, refusal } from '#tests/helpers/actions'

/**
 * A PromptPay id (or biller id) receives payments for one account of the
 * pool only: amounts are told apart per account, so two accounts with one
 * proxy would give two merchants' orders byte-identical QR codes.
 */

/** Neither the back-office nor the shell: the pool's rules applied directly. */
const OPERATOR: Actor = { name: 'operator:ops@example.test' }

/** The account a direct create adds. */
async function addAccount(input: Record<string, unknown>, actor: Actor) {
  const { account } = await createDepositAccount(input, actor)
  return account!
}

let accountNumber = 0
/** A QR account on a bank account of its own (so only the proxy can clash). */
function qrAccount(fields: Record<string, unknown>) {
  accountNumber += 1
  return {
    deposit_group: 'pool-a',
    channel: 'qr',
    bank: 'KBANK',
    account_no: `00100${String(accountNumber).padStart(5, '0')}`,
    account_name: 'Shop Co., Ltd.',
    ...fields,
  }
}

async function accountCount() {
  return Number((await db.from('deposit_accounts').count('* as total').first()).total)
}

test.group('one PromptPay id or biller id per pool', (group) => {
  group.each.setup(() => resetDatabase())

  test('a PromptPay id already in the pool is refused, in any of its written forms', async ({
    assert,
  }) => {
    const first = await addAccount(qrAccount({ promptpay_id: '0812345678' }), OPERATOR)
    for (const written of ['0812345678', '081-234-5678', '+66 81 234 5678', '66812345678']) {
      const error = await refusal(
        addAccount(qrAccount({ deposit_group: 'pool-b', promptpay_id: written }), OPERATOR)
      )
      assert.deepEqual(Object.keys(byField(error)), ['promptpay_id'], written)
      const message = byField(error).promptpay_id
      assert.include(message, `deposit account ${first.id}`, written)
      assert.include(message, 'group pool-a')
      assert.include(message, 'can be in the pool only once')
    }
    assert.equal(await accountCount(), 1)

    // Other proxies are fine, national ids included.
    await addAccount(qrAccount({ promptpay_id: '0812345679' }), OPERATOR)
    await addAccount(qrAccount({ promptpay_id: '3101234567891' }), OPERATOR)
    const nationalId = await refusal(
      addAccount(qrAccount({ promptpay_id: '3-1012-34567-89-1' }), OPERATOR)
    )
    assert.include(byField(nationalId).promptpay_id, 'can be in the pool only once')
  })

  test('an inactive account keeps its PromptPay id and biller id', async ({ assert }) => {
    const first = await addAccount(
      qrAccount({ biller_id: '010555012345678', active: 'off' }),
      OPERATOR
    )
    const error = await refusal(addAccount(qrAccount({ biller_id: '010555012345678' }), OPERATOR))
    assert.include(byField(error).biller_id, `deposit account ${first.id}`)
    assert.include(byField(error).biller_id, 'can be in the pool only once')
    assert.equal(await accountCount(), 1)
  })

  test('an update cannot take a PromptPay id or biller id another account has', async ({
    assert,
  }) => {
    const promptpay = await addAccount(qrAccount({ promptpay_id: '0812345678' }), OPERATOR)
    const biller = await addAccount(qrAccount({ biller_id: '010555012345678' }), OPERATOR)
    const other = await addAccount(qrAccount({ promptpay_id: '0899999999' }), OPERATOR)

    const takesPromptPay = await refusal(
      updateDepositAccount({ id: other.id, promptpay_id: '66812345678' }, OPERATOR)
    )
    assert.include(byField(takesPromptPay).promptpay_id, `deposit account ${promptpay.id}`)
    const takesBiller = await refusal(
      updateDepositAccount({ id: other.id, biller_id: '010555012345678' }, OPERATOR)
    )
    assert.include(byField(takesBiller).biller_id, `deposit account ${biller.id}`)
    await other.refresh()
    assert.equal(other.promptpayId, '0899999999')
    assert.isNull(other.billerId)

    // Changing anything else of an account keeps working.
    const { changed } = await updateDepositAccount(
      { id: promptpay.id, priority: 5, promptpay_id: '081 234 5678' },
      OPERATOR
    )
    assert.deepEqual(changed, ['priority'])
  })

  test('concurrent creates with one PromptPay id: exactly one account is created', async ({
    assert,
  }) => {
    for (const poolSize of [0, 3]) {
      await resetDatabase()
      for (let index = 0; index < poolSize; index++) {
        await addAccount(qrAccount({ promptpay_id: `08900000${index}0` }), OPERATOR)
      }
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          addAccount(qrAccount({ promptpay_id: '0812345678' }), OPERATOR)
        )
      )
      const created = results.filter((result) => result.status === 'fulfilled')
      const refused = results.filter((result) => result.status === 'rejected')
      assert.lengthOf(created, 1, `pool of ${poolSize}`)
      for (const result of refused) {
        assert.instanceOf(result.reason, ActionError, String(result.reason))
        assert.include(byField(result.reason).promptpay_id, 'can be in the pool only once')
      }
      const holders = await DepositAccount.query().where('promptpay_id', '0812345678')
      assert.lengthOf(holders, 1)
      assert.equal(await accountCount(), poolSize + 1)
    }
  })

  test('concurrent updates that would give two accounts one biller id: one wins', async ({
    assert,
  }) => {
    const accounts = await Promise.all(
      [0, 1, 2, 3].map((index) =>
        addAccount(qrAccount({ promptpay_id: `08900000${index}1` }), OPERATOR)
      )
    )
    const results = await Promise.allSettled(
      accounts.map((account) =>
        updateDepositAccount({ id: account.id, biller_id: '010555012345678' }, OPERATOR)
      )
    )
    assert.lengthOf(
      results.filter((result) => result.status === 'fulfilled'),
      1
    )
    assert.lengthOf(await DepositAccount.query().where('biller_id', '010555012345678'), 1)
  })
})
