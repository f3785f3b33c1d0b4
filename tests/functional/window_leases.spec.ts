import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { RedisConnections } from '#core/redis'
import { WindowLeases } from '#merchant_api/window_leases'

/**
 * Request limits spent from leases of their Redis window: two WindowLeases
 * on one key stand for two web processes.
 */
test.group('request rate limits in leases of their window', (group) => {
  let redis: Redis
  /** The same connection, counting the leases asked of Redis through it. */
  let counting: Redis
  let prefix: string
  let leaseCalls = 0
  group.each.setup(async () => {
    redis = (await app.container.make(RedisConnections)).main.duplicate()
    prefix = `gw:test-leases:${randomBytes(6).toString('hex')}`
    // Defines the script on the connection.
    new WindowLeases(redis, { keyPrefix: prefix, points: 1, duration: 1 })
    leaseCalls = 0
    counting = new Proxy(redis, {
      get(target, property) {
        const value = Reflect.get(target, property, target)
        if (property !== 'gwLeasePoints') return value
        return (...args: unknown[]) => {
          leaseCalls++
          return value.apply(target, args)
        }
      },
    })
    return async () => {
      const keys = await redis.keys(`${prefix}:*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    }
  })

  const leases = (points: number, now?: () => number) =>
    new WindowLeases(counting, { keyPrefix: prefix, points, duration: 10 }, now)

  /** Sends `count` consumes at once; how many had a point. */
  const allowed = async (limiter: WindowLeases, key: string, count: number) => {
    const outcomes = await Promise.all(Array.from({ length: count }, () => limiter.consume(key)))
    return outcomes.filter((outcome) => outcome === null).length
  }

  test('a limit under 200 points a window is counted point by point across processes', async ({
    assert,
  }) => {
    const [first, second] = [leases(20), leases(20)]
    const outcomes = []
    for (let i = 0; i < 24; i++) outcomes.push(await (i % 2 ? second : first).consume('M1'))
    assert.lengthOf(
      outcomes.filter((outcome) => outcome === null),
      20
    )
    for (const refused of outcomes.slice(20)) {
      assert.isNotNull(refused)
      assert.isAbove(refused!, 0)
      assert.isAtMost(refused!, 10_000)
    }
    assert.equal(
      await redis.get(`${prefix}:M1`),
      '22',
      'each refusal asked Redis once, then no more'
    )
  })

  test('concurrent requests share one lease at a time, sized by the waiting ones', async ({
    assert,
  }) => {
    const limiter = leases(100_000)
    const before = leaseCalls
    assert.equal(await allowed(limiter, 'M2', 50), 50)
    const leasesTaken = leaseCalls - before
    // The first lease is one point; the 49 that waited for it take the next.
    assert.isAtMost(leasesTaken, 3)
    const handedOut = Number(await redis.get(`${prefix}:M2`))
    assert.isAtLeast(handedOut, 50)
    assert.isAtMost(handedOut, 50 + 100)
    // Spent from this process's lease: no round trip for most of them.
    const again = leaseCalls
    for (let i = 0; i < 40; i++) assert.isNull(await limiter.consume('M2'))
    assert.isAtMost(leaseCalls - again, 2)
  })

  test("two processes spend exactly the window's points, leases included", async ({ assert }) => {
    // 500 points: leases of up to 5, so each process may hold a few unspent.
    const processes = [leases(500), leases(500)]
    let spent = 0
    const refusedBy = new Set<number>()
    for (let round = 0; refusedBy.size < 2 && round < 1000; round++) {
      const batches = await Promise.all(
        processes.map(async (limiter, k) => {
          const got = await allowed(limiter, 'M3', 7)
          if (got < 7) refusedBy.add(k)
          return got
        })
      )
      spent += batches[0] + batches[1]
    }
    assert.equal(refusedBy.size, 2)
    assert.equal(spent, 500)
  })

  test('a spent window refuses without asking Redis until it ends, then counts anew', async ({
    assert,
  }) => {
    let clock = 1_000_000
    const limiter = leases(10, () => clock)
    assert.equal(await allowed(limiter, 'M4', 10), 10)
    assert.isNotNull(await limiter.consume('M4'))
    const before = leaseCalls
    for (let i = 0; i < 20; i++) assert.isNotNull(await limiter.consume('M4'))
    assert.equal(leaseCalls - before, 0)

    // The window's end: Redis forgets the key, this process's clock passes it.
    await redis.del(`${prefix}:M4`)
    clock += 10_001
    assert.isNull(await limiter.consume('M4'))
    assert.equal(await redis.get(`${prefix}:M4`), '1')
    assert.isAbove(await redis.pttl(`${prefix}:M4`), 9_000)
  })

  test('requests that waited across the end of a window share the next one', async ({ assert }) => {
    let clock = 1_000_000
    const limiter = leases(1000, () => clock)
    // The first lease of the window is in flight, four requests wait for it …
    const outcomes = Array.from({ length: 5 }, () => limiter.consume('M6'))
    // … and the window ends before Redis answers.
    clock += 10_001
    assert.deepEqual(await Promise.all(outcomes), [null, null, null, null, null])
    // The one that leased first opens the next window; the four join it and
    // share one lease, instead of each opening a window of its own.
    assert.equal(leaseCalls, 3)
    assert.equal(await redis.get(`${prefix}:M6`), '6')
  })

  test('a key that Redis cannot count throws, and the next request asks again', async ({
    assert,
  }) => {
    const limiter = leases(1000)
    // A key of another type: INCRBY refuses it.
    await redis.set(`${prefix}:M5`, 'not a number')
    await assert.rejects(() => limiter.consume('M5'))
    await redis.del(`${prefix}:M5`)
    assert.isNull(await limiter.consume('M5'))
  })
})
