import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RedisConnections } from '#core/redis'
import { startSecondGateway } from '#tests/helpers/second_process'
import { closedPort } from '#tests/helpers/ports'
import { assertError } from '#tests/helpers/envelope'
import { authBody, createTestMerchant, resetDatabase, signedPost } from '#tests/helpers/merchants'

/**
 * Limits are counted over 10-second windows in Redis, shared by every web
 * process. Each test uses its own source address (127.0.0.x) so that their
 * counters stay apart.
 */
test.group('merchant API request rate limits', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    // Counters of earlier runs (a block lasts 5 minutes) must not leak into this one.
    const redis = (await app.container.make(RedisConnections)).main
    const keys = await redis.keys('gw:rl:*')
    if (keys.length > 0) await redis.del(...keys)
  })
  group.each.timeout(60_000)

  test("a merchant's own limit holds across two processes: 429 too-many-requests with Retry-After", async ({
    assert,
  }) => {
    const second = await startSecondGateway()
    try {
      const who = await createTestMerchant()
      who.merchant.apiRateLimit = 2 // per second: 20 per 10-second window
      await who.merchant.save()

      const responses = []
      for (let i = 0; i < 24; i++) {
        responses.push(
          await signedPost('/balance', who, authBody(who), {
            baseUrl: i % 2 ? second.url : undefined,
          })
        )
      }
      const statuses = responses.map((response) => response.status)
      assert.equal(statuses.filter((status) => status === 200).length, 20, statuses.join(','))
      const refused = responses.filter((response) => response.status === 429)
      assert.lengthOf(refused, 4)
      for (const response of refused) {
        assertError(assert, response, 429, 'too-many-requests', /per second for this merchant/)
        assert.match(String(response.headers['retry-after']), /^\d+$/)
      }
    } finally {
      await second.stop()
    }
  })

  test('the per-IP limit is checked before the database: with MariaDB down, the excess gets 429, not 503', async ({
    assert,
  }) => {
    const second = await startSecondGateway({
      env: { API_RATE_LIMIT_PER_IP: '1', DB_PORT: String(await closedPort()) },
      anyHealthAnswer: true,
    })
    try {
      const who = { merchantId: 'M000000001', token: 't', secret: 's' } as any
      const statuses = []
      for (let i = 0; i < 12; i++) {
        const response = await signedPost('/balance', who, authBody(who), {
          baseUrl: second.url,
          localAddress: '127.0.0.3',
        })
        statuses.push(response.status)
        if (response.status === 429) assertError(assert, response, 429, 'too-many-requests')
      }
      // 10 per window reach authentication (and find the database down), then 429.
      assert.deepEqual(statuses, [...Array(10).fill(503), 429, 429])
    } finally {
      await second.stop()
    }
  })

  test('an address that keeps failing authentication is blocked, valid credentials included', async ({
    assert,
  }) => {
    const second = await startSecondGateway({ env: { API_AUTH_FAILURES_PER_IP: '3' } })
    try {
      const who = await createTestMerchant()
      const wrong = { ...who, token: 'not-the-token' }
      const options = { baseUrl: second.url, localAddress: '127.0.0.4' }
      for (let i = 0; i < 3; i++) {
        const response = await signedPost('/balance', wrong, authBody(wrong), options)
        assertError(assert, response, 403, 'authentication-failed')
      }
      const blocked = await signedPost('/balance', who, authBody(who), options)
      assertError(assert, blocked, 429, 'too-many-requests', /failed authentication/)
      assert.isAbove(Number(blocked.headers['retry-after']), 60)

      // Other addresses are not affected.
      const other = await signedPost('/balance', who, authBody(who), {
        baseUrl: second.url,
        localAddress: '127.0.0.5',
      })
      assert.equal(other.status, 200, other.text)
    } finally {
      await second.stop()
    }
  })
})
