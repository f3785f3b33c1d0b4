import { test } from '@japa/runner'
import { rawRequest } from '#tests/helpers/http'

test.group('GET /health', () => {
  test('200 with the state of MySQL and Redis', async ({ assert }) => {
    const response = await rawRequest('/health', { method: 'GET' })
    assert.equal(response.status, 200)
    assert.isTrue(response.json.healthy)
    // No worker runs in this test: background work is reported as degraded.
    assert.equal(response.json.status, 'degraded')
    assert.equal(response.json.checks.mysql.status, 'up')
    assert.equal(response.json.checks.redis.status, 'up')
  })
})
