import { test } from '@japa/runner'
import { rotateCredentials } from '#services/credentials'
import { authBody, createTestMerchant, resetDatabase, signedPost } from '#tests/helpers/merchants'

test.group('credential rotation', (group) => {
  group.each.setup(() => resetDatabase())

  test('old secret works until the grace period ends, then fails', async ({ assert }) => {
    const who = await createTestMerchant()
    const rotated = await rotateCredentials(who.merchant, {
      token: false,
      secret: true,
      graceSeconds: 2,
      actor: 'test',
    })
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
    const rotated = await rotateCredentials(who.merchant, {
      token: true,
      secret: true,
      graceSeconds: 0,
      actor: 'test',
    })
    const old = await signedPost('/balance', who, authBody(who))
    assert.equal(old.status, 403)
    assert.equal(old.json.error, 'authentication-failed')

    const fresh = { ...who, token: rotated.token!, secret: rotated.secret! }
    assert.equal((await signedPost('/balance', fresh, authBody(fresh))).status, 200)
  })

  test('token rotation with grace keeps both tokens working with the unchanged secret', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const rotated = await rotateCredentials(who.merchant, {
      token: true,
      secret: false,
      graceSeconds: 60,
      actor: 'test',
    })
    const fresh = { ...who, token: rotated.token! }
    assert.equal((await signedPost('/balance', who, authBody(who))).status, 200)
    assert.equal((await signedPost('/balance', fresh, authBody(fresh))).status, 200)
    // A new token never pairs with a secret it was not issued with after that secret expires.
    const mixed = await signedPost('/balance', fresh, authBody(fresh), { secret: 'not-a-secret' })
    assert.equal(mixed.json.error, 'signature-error')
  })

  test('rotation is audited without the credentials', async ({ assert }) => {
    const who = await createTestMerchant()
    const rotated = await rotateCredentials(who.merchant, {
      token: true,
      secret: true,
      graceSeconds: 30,
      actor: 'test',
    })
    const { default: AuditLog } = await import('#models/audit_log')
    const entry = await AuditLog.query()
      .where('action', 'merchant.credentials.rotate')
      .firstOrFail()
    assert.equal(entry.subjectId, who.merchantId)
    const text = JSON.stringify(entry.details)
    assert.notInclude(text, rotated.token!)
    assert.notInclude(text, rotated.secret!)
  })
})
