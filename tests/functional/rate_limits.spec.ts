import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RedisConnections } from '#core/redis'
import { startSecondGateway } from '#tests/helpers/second_process'
import { closedPort } from '#tests/helpers/ports'
import { assertError } from '#tests/helpers/envelope'
import { authBody, createTestMerchant, resetDatabase, signedPost } from '#tests/helpers/merchants'
import { ace, lastJsonLine } from '#tests/helpers/ace'
import { authFailureCounters } from '#merchant_api/auth_failure_blocks'
import db from '@adonisjs/lucid/services/db'
import type { Redis } from 'ioredis'

/** Deletes the keys matching `pattern`, found with SCAN (never KEYS). */
async function deleteKeys(redis: Redis, pattern: string) {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

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
    await deleteKeys(redis, 'gw:rl:*')
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

  test('a flood of bad signatures from one address: its failures past the limit get 429, valid requests from that address never do', async ({
    assert,
  }) => {
    const second = await startSecondGateway({
      env: { API_AUTH_FAILURES_PER_IP: '5', API_AUTH_FAILURES_PER_MERCHANT: '1000' },
    })
    try {
      const who = await createTestMerchant()
      const other = await createTestMerchant()
      const options = { baseUrl: second.url, localAddress: '127.0.0.4' }

      // A client with a wrong secret in a retry loop.
      for (let i = 0; i < 12; i++) {
        const response = await signedPost('/balance', who, authBody(who), {
          ...options,
          secret: 'not-the-secret',
        })
        if (i < 5) {
          assertError(assert, response, 403, 'signature-error')
          continue
        }
        // The 429 says why, and names the refusal the request earned itself.
        assertError(
          assert,
          response,
          429,
          'too-many-requests',
          /too many failed authentication attempts from this address, and this request failed too \(signature-error: /
        )
        const retryAfter = Number(response.headers['retry-after'])
        assert.isAbove(retryAfter, 60)
        assert.isAtMost(retryAfter, 300)
      }

      // Valid requests from the same address: the same merchant and another, every time.
      for (let round = 0; round < 3; round++) {
        for (const merchant of [who, other]) {
          const response = await signedPost('/balance', merchant, authBody(merchant), options)
          assert.equal(response.status, 200, response.text)
        }
      }

      // Successes lift nothing: the failures from there are still refused, whatever they name.
      const wrongToken = { ...who, token: 'not-the-token' }
      assertError(
        assert,
        await signedPost('/balance', wrongToken, authBody(wrongToken), options),
        429,
        'too-many-requests',
        /authentication-failed/
      )
      const unknown = { ...who, merchantId: 'M999999999' }
      assertError(
        assert,
        await signedPost('/balance', unknown, authBody(unknown), options),
        429,
        'too-many-requests'
      )

      // Other addresses are not affected.
      const elsewhere = await signedPost('/balance', wrongToken, authBody(wrongToken), {
        baseUrl: second.url,
        localAddress: '127.0.0.5',
      })
      assertError(assert, elsewhere, 403, 'authentication-failed')
    } finally {
      await second.stop()
    }
  })

  test("a flood of bad signatures naming one merchant from many addresses never stops that merchant's valid requests", async ({
    assert,
  }) => {
    const second = await startSecondGateway({
      env: { API_AUTH_FAILURES_PER_IP: '5', API_AUTH_FAILURES_PER_MERCHANT: '5' },
    })
    try {
      const x = await createTestMerchant()
      const other = await createTestMerchant()
      // 127.0.0.1 is the trusted proxy in the test configuration: X-Forwarded-For names the client.
      const from = (address: string) => ({
        baseUrl: second.url,
        localAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': address },
      })

      // One bad signature from each of 12 addresses, none near its own limit.
      for (let i = 1; i <= 12; i++) {
        const response = await signedPost('/balance', x, authBody(x), {
          ...from(`203.0.113.${i}`),
          secret: 'not-the-secret',
        })
        if (i <= 5) {
          assertError(assert, response, 403, 'signature-error')
          continue
        }
        assertError(
          assert,
          response,
          429,
          'too-many-requests',
          /too many failed authentication attempts on this merchant_id, and this request failed too \(signature-error: /
        )
        assert.isAbove(Number(response.headers['retry-after']), 60)
      }

      // X's own requests go through: from a flood address, through the proxy, and directly.
      for (const options of [from('203.0.113.3'), from('203.0.113.12'), from('198.51.100.7')]) {
        const response = await signedPost('/balance', x, authBody(x), options)
        assert.equal(response.status, 200, response.text)
      }
      const direct = await signedPost('/balance', x, authBody(x), {
        baseUrl: second.url,
        localAddress: '127.0.0.6',
      })
      assert.equal(direct.status, 200, direct.text)
      // Other merchants are not concerned at all.
      const bystander = await signedPost('/balance', other, authBody(other), from('203.0.113.9'))
      assert.equal(bystander.status, 200, bystander.text)

      // Without X's token the answer stays the one identity message, as for a
      // merchant_id that does not exist: a block does not tell that X exists.
      const guess = { ...x, token: 'not-the-token' }
      const guessed = await signedPost('/balance', guess, authBody(guess), from('203.0.113.50'))
      const made = { ...guess, merchantId: 'M999999998' }
      const madeUp = await signedPost('/balance', made, authBody(made), from('203.0.113.51'))
      assertError(assert, guessed, 403, 'authentication-failed')
      assertError(assert, madeUp, 403, 'authentication-failed', guessed.json.message)

      // Both were counted against their addresses; only X has a merchant_id counter.
      const redis = (await app.container.make(RedisConnections)).main
      const { counters } = await authFailureCounters(redis)
      const merchants = counters.filter((counter) => counter.kind === 'merchant')
      assert.deepEqual(
        merchants.map((counter) => [counter.subject, counter.failures, counter.blocked]),
        [[x.merchantId, 13, true]]
      )
      const addresses = counters.filter((counter) => counter.kind === 'ip')
      assert.includeMembers(
        addresses.map((counter) => counter.subject),
        ['203.0.113.1', '203.0.113.12', '203.0.113.50', '203.0.113.51']
      )
      assert.isTrue(addresses.every((counter) => !counter.blocked && counter.failures === 1))
    } finally {
      await second.stop()
    }
  })

  test('api:blocks lists the blocked addresses and merchant_ids, --all those still counting, and --clear lifts one (audited)', async ({
    assert,
  }) => {
    const x = await createTestMerchant()
    const second = await startSecondGateway({
      env: { API_AUTH_FAILURES_PER_IP: '3', API_AUTH_FAILURES_PER_MERCHANT: '3' },
    })
    try {
      // An address guessing merchant_ids that do not exist: the address only.
      const made = { ...x, merchantId: 'M999999997', token: 'guess' }
      for (let i = 0; i < 4; i++) {
        await signedPost('/balance', made, authBody(made), {
          baseUrl: second.url,
          localAddress: '127.0.0.7',
        })
      }
      // X's integration with a wrong secret on four servers.
      for (let i = 1; i <= 4; i++) {
        await signedPost('/balance', x, authBody(x), {
          baseUrl: second.url,
          localAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
          secret: 'not-the-secret',
        })
      }
    } finally {
      await second.stop()
    }

    const blocked = await ace('api:blocks', '--json')
    assert.equal(blocked.code, 0, blocked.output)
    const rows = lastJsonLine(blocked.stdout)
    assert.deepEqual(
      rows.map((row: any) => [row.kind, row.subject, row.failures, row.limit, row.blocked]),
      [
        ['address', '127.0.0.7', 4, 3, true],
        ['merchant_id', x.merchantId, 4, 3, true],
      ]
    )
    for (const row of rows) {
      assert.isAbove(row.seconds_left, 200)
      assert.isAtMost(row.seconds_left, 300)
    }

    const all = lastJsonLine((await ace('api:blocks', '--all', '--json')).stdout)
    assert.sameMembers(
      all.filter((row: any) => !row.blocked).map((row: any) => `${row.subject} ${row.failures}`),
      ['198.51.100.1 1', '198.51.100.2 1', '198.51.100.3 1', '198.51.100.4 1']
    )

    const table = await ace('api:blocks')
    assert.equal(table.code, 0, table.output)
    assert.include(table.stdout, '127.0.0.7')
    assert.include(table.stdout, x.merchantId)
    assert.include(table.stdout, 'blocked')
    assert.notInclude(table.stdout, '198.51.100.1')

    const cleared = await ace('api:blocks', '--clear=127.0.0.7', '--comment=guessing stopped')
    assert.equal(cleared.code, 0, cleared.output)
    assert.include(
      cleared.output,
      'address 127.0.0.7: block lifted (4 failed authentications counted)'
    )
    const left = lastJsonLine((await ace('api:blocks', '--json')).stdout)
    assert.deepEqual(
      left.map((row: any) => row.subject),
      [x.merchantId]
    )
    const audit = await db.from('audit_logs').where('action', 'api_block.clear')
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].subject_type, 'ip_address')
    assert.equal(audit[0].subject_id, '127.0.0.7')
    assert.match(audit[0].actor, /^cli:/)
    assert.equal(audit[0].comment, 'guessing stopped')
    const before =
      typeof audit[0].before_values === 'string'
        ? JSON.parse(audit[0].before_values)
        : audit[0].before_values
    assert.equal(before.failures, 4)
    assert.isTrue(before.blocked)

    const byMerchant = await ace('api:blocks', `--clear=${x.merchantId}`)
    assert.equal(byMerchant.code, 0, byMerchant.output)
    assert.include(byMerchant.output, `merchant_id ${x.merchantId}: block lifted`)
    const none = await ace('api:blocks')
    assert.include(none.output, 'Nothing blocked')

    // Refusals: nothing counted there, and neither an address nor a merchant_id.
    const nothing = await ace('api:blocks', '--clear=10.1.2.3')
    assert.equal(nothing.code, 1)
    assert.include(nothing.output, 'No failed authentication is counted for address 10.1.2.3')
    const garbage = await ace('api:blocks', '--clear=not an address!')
    assert.equal(garbage.code, 1)
    assert.include(garbage.output, 'subject must be an IP address')
    assert.lengthOf(await db.from('audit_logs').where('action', 'api_block.clear'), 2)
  })
})
