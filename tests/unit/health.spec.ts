import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { Redis } from 'ioredis'
import { HealthService } from '#core/health'

test.group('health service', () => {
  test('reports both dependencies up', async ({ assert }) => {
    const health = await app.container.make(HealthService)
    const report = await health.check()
    assert.isTrue(report.healthy)
    assert.equal(report.checks.mysql.status, 'up')
    assert.equal(report.checks.redis.status, 'up')
  })

  test('reports unavailable when Redis does not answer', async ({ assert }) => {
    const health = await app.container.make(HealthService)
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const deadRedis = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    deadRedis.on('error', () => {})
    try {
      const report = await health.check(deadRedis)
      assert.isFalse(report.healthy)
      assert.equal(report.status, 'unavailable')
      assert.equal(report.checks.redis.status, 'down')
      assert.equal(report.checks.mysql.status, 'up')
    } finally {
      deadRedis.disconnect()
    }
  })
})
