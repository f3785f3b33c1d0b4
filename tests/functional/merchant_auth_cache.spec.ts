import type { Actor } from '#core/actor'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import { RedisConnections } from '#core/redis'
import { rotateCredentials } from '#merchants/actions/rotate_credentials'
import { configureMerchant } from '#merchants/actions/configure_merchant'
import { editIpWhitelist } from '#merchants/actions/edit_ip_whitelist'
import { createMerchant } from '#merchants/actions/create_merchant'
import { scheduleCredentialRotation } from '#merchants/actions/schedule_credential_rotation'
import { performScheduledRotation } from '#merchants/actions/perform_scheduled_rotation'
import { MerchantAuthCache, loadMerchantAuth } from '#merchant_api/merchant_auth_cache'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'
import { assertError } from '#tests/helpers/envelope'
import { rawRequest, refusedWithin } from '#tests/helpers/http'
import { aceProcess } from '#tests/helpers/ace'
import {
  TEST_ACTOR,
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/** A rotation applied at once (not from the back-office): its new values. */
async function rotateNow(input: Record<string, unknown>, actor: Actor) {
  const rotated = await rotateCredentials(input, actor)
  if (rotated.outcome !== 'rotated') throw new Error('expected the rotation to apply at once')
  return rotated
}

/** A rotation scheduled at once (not from the back-office). */
async function scheduleNow(input: Record<string, unknown>, actor: Actor) {
  const scheduled = await scheduleCredentialRotation(input, actor)
  if (scheduled.outcome !== 'scheduled') throw new Error('expected the rotation to be scheduled')
  return scheduled
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function balance(who: TestMerchant, baseUrl?: string) {
  return signedPost('/balance', who, authBody(who), { baseUrl })
}

/**
 * Authentication data is cached in each web process. The second process keeps
 * its copies for a minute (AUTH_CACHE_TTL_MS), so only the change announced
 * through Redis can make it refuse within the second these tests allow.
 */
test.group('merchant authentication cache across processes', (group) => {
  let second: SecondGateway

  group.setup(async () => {
    second = await startSecondGateway({
      env: { AUTH_CACHE_TTL_MS: '60000', API_AUTH_FAILURES_PER_IP: '1000000' },
    })
    // Its first merchant API request subscribes it to the announcements (and empties its
    // cache once Redis confirms): done here, so that the tests' copies are kept.
    await rawRequest('/balance', {
      baseUrl: second.url,
      body: JSON.stringify({ merchant_id: 'M0', token: 'none', time: 0 }),
      headers: { 'content-type': 'application/json' },
    })
    await sleep(500)
    return () => second.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    // Failed authentications count per source address in Redis (a block lasts 5 minutes).
    const redis = (await app.container.make(RedisConnections)).main
    const keys = await redis.keys('gw:rl:*')
    if (keys.length > 0) await redis.del(...keys)
  })
  group.each.timeout(60_000)

  test('a rotation with grace 0 in one process is refused by the other within a second', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who, second.url)).status, 200)
    assert.equal((await balance(who)).status, 200)

    const rotated = await rotateNow(
      { merchant_id: who.merchantId, token: true, secret: true, grace_seconds: 0 },
      TEST_ACTOR
    )
    const { response, elapsed } = await refusedWithin(() => balance(who, second.url))
    assertError(assert, response, 403, 'authentication-failed')
    assert.isBelow(elapsed, 1000)
    assertError(assert, await balance(who), 403, 'authentication-failed')

    const fresh = { ...who, token: rotated.token!, secret: rotated.secret! }
    assert.equal((await balance(fresh, second.url)).status, 200)
    assert.equal((await balance(fresh)).status, 200)
  })

  test('a scheduled rotation with grace 0 is refused by the other process within a second', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const { rotation } = await scheduleNow(
      {
        merchant_id: who.merchantId,
        run_at: DateTime.utc().plus({ seconds: 1 }).toISO(),
        secret: true,
        grace_seconds: 0,
      },
      TEST_ACTOR
    )
    assert.equal((await balance(who, second.url)).status, 200)
    assert.isTrue(await performScheduledRotation(rotation.id, DateTime.utc().plus({ minutes: 1 })))
    const { response, elapsed } = await refusedWithin(() => balance(who, second.url))
    // Same token, old secret: the token still names a credential, the signature no longer matches.
    assertError(assert, response, 403, 'signature-error')
    assert.isBelow(elapsed, 1000)
  })

  test('a suspension is refused by the other process within a second; reactivation is seen too', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who, second.url)).status, 200)

    await configureMerchant({ merchant_id: who.merchantId, status: 'suspended' }, TEST_ACTOR)
    const { response, elapsed } = await refusedWithin(() => balance(who, second.url))
    assertError(assert, response, 403, 'authentication-failed')
    assert.isBelow(elapsed, 1000)
    assertError(assert, await balance(who), 403, 'authentication-failed')

    await configureMerchant({ merchant_id: who.merchantId, status: 'active' }, TEST_ACTOR)
    assert.equal((await balance(who, second.url)).status, 200)
  })

  test('a suspension from the command line reaches both web processes', async ({ assert }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who, second.url)).status, 200)
    assert.equal((await balance(who)).status, 200)

    const result = await aceProcess('merchant:configure', who.merchantId, '--status=suspended')
    assert.equal(result.code, 0, result.output)
    for (const url of [second.url, undefined]) {
      const { response, elapsed } = await refusedWithin(() => balance(who, url))
      assertError(assert, response, 403, 'authentication-failed')
      assert.isBelow(elapsed, 1000)
    }
  })

  test('a whitelist change is applied by the other process within a second, both ways', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who, second.url)).status, 200)

    await editIpWhitelist({ merchant_id: who.merchantId, add: ['203.0.113.7'] }, TEST_ACTOR)
    const { response, elapsed } = await refusedWithin(() => balance(who, second.url))
    assertError(assert, response, 403, 'ip-not-whitelisted')
    assert.isBelow(elapsed, 1000)

    await editIpWhitelist({ merchant_id: who.merchantId, add: ['127.0.0.1'] }, TEST_ACTOR)
    assert.equal((await balance(who, second.url)).status, 200)
    assert.equal((await balance(who)).status, 200)
  })

  test('a credential in its grace period stops at its grace end although its copy is cached', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const rotated = await rotateNow(
      { merchant_id: who.merchantId, secret: true, grace_seconds: 2 },
      TEST_ACTOR
    )
    // Both credentials are read (and cached for a minute) now.
    assert.equal((await balance(who, second.url)).status, 200)
    await sleep(Math.max(0, rotated.previous_valid_until.toMillis() - Date.now()) + 50)
    assertError(assert, await balance(who, second.url), 403, 'signature-error')
    assert.equal((await balance({ ...who, secret: rotated.secret! }, second.url)).status, 200)
  })
})

test.group('merchant authentication cache in one process', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    const redis = (await app.container.make(RedisConnections)).main
    const keys = await redis.keys('gw:rl:*')
    if (keys.length > 0) await redis.del(...keys)
  })
  group.each.timeout(60_000)

  test('a cached merchant still fails a wrong signature, and a wrong token', async ({ assert }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who)).status, 200)
    assertError(
      assert,
      await signedPost('/balance', who, authBody(who), { secret: who.secret + 'x' }),
      403,
      'signature-error'
    )
    // The last character changed (a token may end in 'x' already).
    const wrongToken = who.token.slice(0, -1) + (who.token.endsWith('x') ? 'y' : 'x')
    assertError(assert, await balance({ ...who, token: wrongToken }), 403, 'authentication-failed')
    assert.equal((await balance(who)).status, 200)
  })

  test('a change that bypasses the actions is seen once the entry expires (AUTH_CACHE_TTL_MS)', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    assert.equal((await balance(who)).status, 200)
    await db.from('merchants').where('id', who.merchant.id).update({ status: 'suspended' })
    await sleep(1100)
    assertError(assert, await balance(who), 403, 'authentication-failed')
  })

  test('unknown merchant_ids are bounded and not cached forever; a new merchant is seen at once', async ({
    assert,
  }) => {
    await createTestMerchant() // its platform
    let reads = 0
    const cache = new MerchantAuthCache({ ttlMs: 300, maxEntries: 20 }, (merchantId) => {
      reads++
      return loadMerchantAuth(merchantId)
    })
    const stop = cache.followChanges()
    try {
      for (let i = 0; i < 200; i++) assert.isNull(await cache.get(`NOSUCH${i}`))
      assert.isAtMost(cache.size.missing, 2, 'unknown ids have a share of a tenth')
      assert.equal(cache.size.found, 0)

      reads = 0
      assert.isNull(await cache.get('NOSUCH199'))
      assert.equal(reads, 0, 'a recent miss is answered from the cache')
      await sleep(350)
      assert.isNull(await cache.get('NOSUCH199'))
      assert.equal(reads, 1, 'an expired miss is read again')

      // A miss cached now, then the merchant is created: announced, so seen at once.
      assert.isNull(await cache.get('MNEW1'))
      await createMerchant({ platform: 'test', name: 'New', merchant_id: 'MNEW1' }, TEST_ACTOR)
      assert.equal((await cache.get('MNEW1'))?.row.merchant_id, 'MNEW1')
    } finally {
      stop()
    }
  })

  test('known merchants are bounded too; the newest stay', async ({ assert }) => {
    const cache = new MerchantAuthCache({ ttlMs: 60_000, maxEntries: 5 })
    const merchants = []
    for (let i = 0; i < 8; i++) merchants.push(await createTestMerchant())
    for (const who of merchants) assert.isNotNull(await cache.get(who.merchantId))
    assert.equal(cache.size.found, 5)

    // Rows changed behind the cache's back: the newest five still answer from it.
    await db.from('merchants').update({ status: 'suspended' })
    for (const who of merchants.slice(3)) {
      assert.equal((await cache.get(who.merchantId))?.status, 'active')
    }
    assert.equal((await cache.get(merchants[0].merchantId))?.status, 'suspended')
    assert.equal(cache.size.found, 5)
  })

  test('a change announced while a read is under way is not kept', async ({ assert }) => {
    const who = await createTestMerchant()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const cache = new MerchantAuthCache({ ttlMs: 60_000, maxEntries: 10 }, async (merchantId) => {
      const data = await loadMerchantAuth(merchantId)
      await gate
      return data
    })
    const stop = cache.followChanges()
    try {
      const reading = cache.get(who.merchantId)
      await sleep(100) // the rows have been read
      await configureMerchant({ merchant_id: who.merchantId, status: 'suspended' }, TEST_ACTOR)
      release()
      assert.equal(
        (await reading)?.status,
        'active',
        'the read that was under way answers its caller'
      )
      assert.equal(cache.size.found, 0)
      assert.equal((await cache.get(who.merchantId))?.status, 'suspended')

      // Concurrent requests for one merchant share one read.
      await merchantAuthChanged(undefined, who.merchantId)
      const [a, b] = await Promise.all([cache.get(who.merchantId), cache.get(who.merchantId)])
      assert.strictEqual(a, b)
    } finally {
      stop()
    }
  })
})
