import { test } from '@japa/runner'
import { rawRequest } from '#tests/helpers/http'

test.group('GET /health', () => {
  test('200 with the state of MySQL and Redis', async ({ assert }) => {
    const response = await rawRequest('/health', { method: 'GET' })
    assert.equal(response.status, 200)
    assert.equal(response.json.status, 'ok')
    assert.equal(response.json.checks.mysql.status, 'up')
    assert.equal(response.json.checks.redis.status, 'up')
  })
})
