import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import AuditLog from '#core/audit_log'
import MerchantCredential from '#merchants/models/merchant_credential'
import { rotateCredentials } from '#merchants/actions/rotate_credentials'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import type { Actor } from '#core/actor'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { byField, refusal } from '#tests/helpers/actions'
import {
  TEST_ACTOR,
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/** A rotation applied at once (not from the back-office): its new values. */
async function rotateNow(input: Record<string, unknown>, actor: Actor) {
  const rotated = await rotateCredentials(input, actor)
  if (rotated.outcome !== 'rotated') throw new Error('expected the rotation to apply at once')
  return rotated
}

/** An operator at the server's shell: the rotation applies at once (break-glass). */
const SHELL: Actor = {
  name: 'cli:ops',
  ip: '203.0.113.4',
  requestId: 'req-rotate',
}

test.group('credential rotation', (group) => {
  group.each.setup(() => resetDatabase())

  test('old secret works until the grace period ends, then fails', async ({ assert }) => {
    const who = await createTestMerchant()
    const rotated = await rotateNow(
      { merchant_id: who.merchantId, secret: true, grace_seconds: 2 },
      TEST_ACTOR
    )
    assert.isString(rotated.secret)
    assert.notEqual(rotated.secret, who.secret)
    assert.isUndefined(rotated.token)

    const withOld = () => signedPost('/balance', who, authBody(who))
    const withNew = () => signedPost('/balance', who, authBody(who), { secret: rotated.secret })
    assert.equal((await withOld()).status, 200)
    assert.equal((await withNew()).status, 200)

    await new Promise((resolve) => setTimeout(resolve, 2200))

    const expired = await withOld()
    assert.equal(expired.status, 403)
    assert.equal(expired.json.error, 'signature-error')
    assert.equal((await withNew()).status, 200)
  })

  test('grace 0 revokes the old token and secret at once', async ({ assert }) => {
    const who = await createTestMerchant()
    const rotated = await rotateNow(
      { merchant_id: who.merchantId, token: true, secret: true, grace_seconds: 0 },
      TEST_ACTOR
    )
    const old = await signedPost('/balance', who, authBody(who))
    assert.equal(old.status, 403)
    assert.equal(old.json.error, 'authentication-failed')

    const fresh = { ...who, token: rotated.token!, secret: rotated.secret! }
    assert.equal((await signedPost('/balance', fresh, authBody(fresh))).status, 200)
    const previous = await MerchantCredential.query()
      .where('merchant_id', who.merchant.id)
      .whereNotNull('expires_at')
    assert.lengthOf(previous, 1)
    assert.isNotNull(previous[0].revokedAt, 'grace 0 records the revocation')
  })

  test('token rotation with grace keeps both tokens working with the unchanged secret', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const rotated = await rotateNow(
      { merchant_id: who.merchantId, token: 'on', grace_seconds: '60' },
      TEST_ACTOR
    )
    const fresh = { ...who, token: rotated.token! }
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
    assert.equal((await signedPost('/balance', fresh, authBody(fresh))).status, 200)
    // A new token never pairs with a secret it was not issued with after that secret expires.
    const mixed = await signedPost('/balance', fresh, authBody(fresh), { secret: 'not-a-secret' })
    assert.equal(mixed.json.error, 'signature-error')
  })

  test('a revoked credential no longer authenticates, even before its grace end', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const rotated = await rotateNow(
      { merchant_id: who.merchantId, token: true, grace_seconds: 3600 },
      TEST_ACTOR
    )
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
    await db
      .from('merchant_credentials')
      .where('merchant_id', who.merchant.id)
      .whereNotNull('expires_at')
      .update({ revoked_at: new Date() })
    // Announced as every action that revokes does: authentication caches the credentials.
    await merchantAuthChanged(undefined, who.merchantId)
    const old = await signedPost('/balance', who, authBody(who))
    assert.equal(old.status, 403)
    assert.equal(old.json.error, 'authentication-failed')
    const fresh = { ...who, token: rotated.token! }
    assert.equal((await signedPost('/balance', fresh, authBody(fresh))).status, 200)
  })

  test('rotation is audited with the actor, before/after credential ids, without the values', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const first = await MerchantCredential.findByOrFail('merchant_id', who.merchant.id)
    const rotated = await rotateNow(
      {
        merchant_id: who.merchantId,
        token: true,
        secret: true,
        grace_seconds: 30,
        comment: 'yearly rotation',
      },
      SHELL
    )
    const entry = await AuditLog.query()
      .where('action', 'merchant.credentials.rotate')
      .firstOrFail()
    assert.equal(entry.subjectId, who.merchantId)
    assert.equal(entry.actor, SHELL.name)
    assert.isNull(entry.operatorId)
    assert.equal(entry.ip, '203.0.113.4')
    assert.equal(entry.requestId, 'req-rotate')
    assert.equal(entry.comment, 'yearly rotation')
    assert.deepEqual(entry.beforeValues, { credential_id: first.id, token_hint: first.tokenHint })
    assert.deepEqual(entry.afterValues, {
      credential_id: first.id + 1,
      token_hint: rotated.token!.slice(-4),
    })
    assert.include(entry.details!, { token_rotated: true, secret_rotated: true, grace_seconds: 30 })
    const text = JSON.stringify([entry.details, entry.beforeValues, entry.afterValues])
    assert.notInclude(text, rotated.token!)
    assert.notInclude(text, rotated.secret!)
    assert.notInclude(text, who.secret)
  })

  test('field errors: nothing to rotate, grace out of range or not a number; nothing written', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const before = await db.from('merchant_credentials').count('* as total').first()

    assert.deepEqual(
      byField(await refusal(rotateCredentials({ merchant_id: who.merchantId }, TEST_ACTOR))),
      { token: 'choose what to rotate: token, secret or both' }
    )
    assert.deepEqual(
      byField(
        await refusal(
          rotateCredentials(
            { merchant_id: who.merchantId, secret: 'maybe', grace_seconds: 2_592_001 },
            TEST_ACTOR
          )
        )
      ),
      {
        secret: 'secret must be on or off',
        grace_seconds: 'grace_seconds must be a whole number from 0 to 2592000',
      }
    )
    assert.deepEqual(
      byField(
        await refusal(
          rotateCredentials(
            { merchant_id: who.merchantId, secret: true, grace_seconds: 'soon' },
            TEST_ACTOR
          )
        )
      ),
      { grace_seconds: 'grace_seconds must be a number' }
    )
    const unknown = await refusal(
      rotateCredentials({ merchant_id: 'NOSUCH1', secret: true }, TEST_ACTOR)
    )
    assert.isTrue(unknown.notFound)
    assert.deepEqual(byField(unknown), { merchant_id: 'No merchant with merchant_id NOSUCH1' })

    const after = await db.from('merchant_credentials').count('* as total').first()
    assert.equal(Number(after.total), Number(before.total))
    assert.lengthOf(await AuditLog.query().where('action', 'merchant.credentials.rotate'), 0)
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
  })

  test('merchant:rotate prints the same message as the action and writes nothing', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const result = await ace('merchant:rotate', who.merchantId, '--grace=-1')
    assert.equal(result.code, 1, result.output)
    assert.include(result.output, 'grace_seconds must be a whole number from 0 to 2592000')
    assert.lengthOf(await AuditLog.query().where('action', 'merchant.credentials.rotate'), 0)

    const rotated = await ace('merchant:rotate', who.merchantId, '--token', '--grace=5', '--json')
    assert.equal(rotated.code, 0, rotated.output)
    const printed = lastJsonLine(rotated.stdout)
    assert.lengthOf(printed.token, 40)
    assert.notProperty(printed, 'secret')
    assert.equal(printed.grace_seconds, 5)
    assert.isString(printed.previous_valid_until)
  })
})
