import { test } from '@japa/runner'
import { parseSentinels } from '#core/redis_sentinels'
import { redisOptions } from '#core/redis'
import redisConfig from '#config/redis'

test.group('REDIS_SENTINELS', () => {
  test('unset or blank means a direct connection', ({ assert }) => {
    assert.isUndefined(parseSentinels(undefined))
    assert.isUndefined(parseSentinels(''))
    assert.isUndefined(parseSentinels('  '))
  })

  test('host:port entries separated by commas, spaces allowed, IPv6 in brackets', ({ assert }) => {
    assert.deepEqual(parseSentinels('10.0.0.5:26379, sentinel-b.internal:26380,[::1]:26381'), [
      { host: '10.0.0.5', port: 26379 },
      { host: 'sentinel-b.internal', port: 26380 },
      { host: '::1', port: 26381 },
    ])
    assert.deepEqual(parseSentinels('127.0.0.1:26379'), [{ host: '127.0.0.1', port: 26379 }])
  })

  test('a bad entry is refused with the variable and the entry named', ({ assert }) => {
    for (const [value, entry] of [
      ['127.0.0.1:26379,oops', 'oops'],
      ['127.0.0.1', '127.0.0.1'],
      ['127.0.0.1:0', '127.0.0.1:0'],
      ['127.0.0.1:65536', '127.0.0.1:65536'],
      ['127.0.0.1:26379,,127.0.0.1:26380', ''],
      ['host:port', 'host:port'],
      ['redis://127.0.0.1:26379', 'redis://127.0.0.1:26379'],
      ['::1:26379', '::1:26379'],
    ]) {
      assert.throws(
        () => parseSentinels(value),
        new RegExp(
          `^REDIS_SENTINELS: bad entry "${entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`
        ),
        value
      )
    }
    assert.throws(
      () => parseSentinels('127.0.0.1:26379,127.0.0.1:26379'),
      /REDIS_SENTINELS: entry "127.0.0.1:26379" is listed twice/
    )
  })

  test('through Sentinel: the master by name, failover followed; password and db still apply', ({
    assert,
  }) => {
    const options = redisOptions(
      { commandTimeout: 1000 },
      {
        ...redisConfig,
        password: 'secret',
        db: 11,
        sentinels: parseSentinels('127.0.0.1:26379,127.0.0.1:26380'),
        masterName: 'gw',
        sentinelPassword: 'sentinel-secret',
      }
    )
    assert.deepEqual(options.sentinels, [
      { host: '127.0.0.1', port: 26379 },
      { host: '127.0.0.1', port: 26380 },
    ])
    assert.equal(options.name, 'gw')
    assert.equal(options.role, 'master')
    assert.equal(options.sentinelPassword, 'sentinel-secret')
    assert.equal(options.password, 'secret')
    assert.equal(options.db, 11)
    // Failovers are followed by createRedis's own +switch-master subscription (see redis.ts).
    assert.isFalse(options.failoverDetector)
    assert.equal(options.commandTimeout, 1000)
    assert.notProperty(options, 'host')
    // Every Sentinel unreachable: keep asking (never give the connection up for good).
    assert.equal(options.sentinelRetryStrategy!(100), 500)
    const reconnect = options.reconnectOnError as (error: Error) => boolean | 1 | 2
    assert.equal(reconnect(new Error("READONLY You can't write against a read only replica.")), 2)
    assert.isFalse(reconnect(new Error('ERR wrong number of arguments')))
  })

  test('without Sentinel the connection is the direct one, as before', ({ assert }) => {
    const options = redisOptions({}, { ...redisConfig, sentinels: undefined, host: 'h', port: 1 })
    assert.equal(options.host, 'h')
    assert.equal(options.port, 1)
    assert.notProperty(options, 'sentinels')
    assert.notProperty(options, 'reconnectOnError')
    assert.equal(options.retryStrategy!(1), 100)
    assert.equal(options.retryStrategy!(50), 500)
    assert.isTrue(options.lazyConnect)
  })
})
