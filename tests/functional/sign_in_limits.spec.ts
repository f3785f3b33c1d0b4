import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { createOperator } from '#operators/actions/create_operator'
import { unlockOperator } from '#operators/actions/unlock_operator'
import {
  accountLockedFor,
  countFailedSignIn,
  isKnownAccount,
  signInBlock,
} from '#operators/sign_in_limits'
import adminConfig from '#config/admin'
import { ace } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import { resetDatabase } from '#tests/helpers/merchants'

const cli = { name: 'cli:test' }
const OFFICE = '203.0.113.10'
const OFFICE_OF_FOUR = [
  'anna@example.com',
  'boon@example.com',
  'chai@example.com',
  'dao@example.com',
] as const

async function fail(email: string, ip = OFFICE, times = 1) {
  const known = await isKnownAccount(email)
  for (let attempt = 0; attempt < times; attempt++) await countFailedSignIn(email, ip, known)
}

async function blockOf(email: string, ip = OFFICE) {
  return signInBlock(email, ip, await isKnownAccount(email))
}

test.group('sign-in limits', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    for (const [index, email] of OFFICE_OF_FOUR.entries()) {
      await createOperator({ email, role: index === 0 ? 'admin' : 'operator' }, cli)
    }
  })

  test("an office of four on one address: one person's failures lock only that person", async ({
    assert,
  }) => {
    const [anna, boon, chai, dao] = OFFICE_OF_FOUR
    await fail(boon, OFFICE, adminConfig.loginFailures - 1)
    assert.isNull(await blockOf(boon), 'four failures: not yet locked')
    await fail(boon)
    const block = await blockOf(boon)
    assert.equal(block?.reason, 'account')
    assert.isAbove(block!.seconds, 14 * 60)
    // Locked from any address, not only the office's.
    assert.equal((await blockOf(boon, '198.51.100.7'))?.reason, 'account')
    // The others on the same address are not touched, even after many more failures of Boon's.
    await fail(boon, OFFICE, 20)
    for (const email of [anna, chai, dao]) assert.isNull(await blockOf(email), email)
    // Chai's own failures count on Chai alone.
    await fail(chai, OFFICE, 3)
    assert.isNull(await blockOf(chai))
    assert.isNull(await blockOf(dao))
  })

  test('guessing unknown emails is limited per address; known accounts from it still sign in', async ({
    assert,
  }) => {
    const limit = adminConfig.loginUnknownFailuresPerAddress
    assert.isAbove(limit, adminConfig.loginFailures)
    for (let guess = 0; guess < limit; guess++) {
      assert.isNull(await blockOf(`guess-${guess}@example.com`), `guess ${guess}`)
      await fail(`guess-${guess}@example.com`)
    }
    const blocked = await blockOf('yet-another@example.com')
    assert.equal(blocked?.reason, 'address')
    // Another address may still try; the office's real operators are not limited.
    assert.isNull(await blockOf('yet-another@example.com', '198.51.100.7'))
    for (const email of OFFICE_OF_FOUR) assert.isNull(await blockOf(email), email)
    // An unknown email is locked after as many failures as a real account (no telling them apart).
    await fail('ghost@example.com', '198.51.100.8', adminConfig.loginFailures)
    assert.equal((await blockOf('ghost@example.com', '198.51.100.9'))?.reason, 'account')
  })

  test('unlock clears the lock at once, and is audited', async ({ assert }) => {
    const boon = OFFICE_OF_FOUR[1]
    await fail(boon, OFFICE, adminConfig.loginFailures)
    assert.isAbove(await accountLockedFor(boon), 0)
    const actor = { name: 'operator:anna@example.com', ip: OFFICE }
    const { wasLocked } = await unlockOperator(
      { email: 'Boon@Example.com', comment: 'typo' },
      actor
    )
    assert.isTrue(wasLocked)
    assert.equal(await accountLockedFor(boon), 0)
    assert.isNull(await blockOf(boon))
    const row = await db.from('audit_logs').where('action', 'operator.unlock').firstOrFail()
    assert.equal(row.actor, 'operator:anna@example.com')
    assert.equal(row.subject_id, boon)
    const details = typeof row.details === 'string' ? JSON.parse(row.details) : row.details
    assert.deepEqual(details, { was_locked: true, failures_forgotten: adminConfig.loginFailures })

    const again = await unlockOperator({ email: boon }, actor)
    assert.isFalse(again.wasLocked)
    const error = await refusal(unlockOperator({ email: 'nobody@example.com' }, actor))
    assert.include(byField(error).email, 'no operator nobody@example.com')
  })

  test('operator:unlock --email unlocks from the command line, audited as the CLI', async ({
    assert,
  }) => {
    const dao = OFFICE_OF_FOUR[3]
    await fail(dao, OFFICE, adminConfig.loginFailures)
    assert.equal((await blockOf(dao))?.reason, 'account')

    const result = await ace('operator:unlock', `--email=${dao}`, '--comment=forgot caps lock')
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, `Operator ${dao} unlocked`)
    assert.isNull(await blockOf(dao))
    const row = await db.from('audit_logs').where('action', 'operator.unlock').firstOrFail()
    assert.match(row.actor, /^cli/)
    assert.equal(row.comment, 'forgot caps lock')

    const unknown = await ace('operator:unlock', '--email=nobody@example.com')
    assert.notEqual(unknown.code, 0)
    assert.include(unknown.output, 'no operator nobody@example.com')
  })
})
