import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { RedisConnections } from '#core/redis'
import { QUEUE_NAMES, SCHEDULES } from '#jobs/jobs'
import { missingSchedules } from '#core/queue/schedules'
import { rawRequest } from '#tests/helpers/http'
import { startWorkerProcess } from '#tests/helpers/worker_process'
import { until } from '#tests/helpers/worker'

async function redis() {
  return (await app.container.make(RedisConnections)).main
}

async function health() {
  return (await rawRequest('/health', { method: 'GET' })).json
}

test.group('worker schedules survive Redis losing its data', (group) => {
  group.each.timeout(60_000)
  group.each.setup(async () => {
    await (await redis()).flushdb()
  })

  test('a running worker registers its schedules again after Redis loses every key; /health shows it', async ({
    assert,
  }) => {
    const worker = startWorkerProcess({ SCHEDULE_CHECK_INTERVAL_MS: '500' })
    try {
      assert.isTrue(
        await until(async () => (await missingSchedules(QUEUE_NAMES)).length === 0, 30_000),
        'the worker registers its schedules at start'
      )
      assert.isTrue(await until(async () => (await health()).workers?.length === 1, 5_000))
      let report = await health()
      assert.equal(report.status, 'ok')
      assert.deepEqual(report.schedules, { status: 'ok', missing: [] })
      assert.equal(report.workers[0].schedules, 'ok')
      assert.deepEqual(report.workers[0].queues, [...QUEUE_NAMES])
      assert.isNull(report.workers[0].restored_at)

      // What a Redis restart without persistence does: every key is gone.
      await (await redis()).flushdb()
      assert.deepEqual((await missingSchedules(QUEUE_NAMES)).length, SCHEDULES.length)

      assert.isTrue(
        await until(async () => (await missingSchedules(QUEUE_NAMES)).length === 0, 5_000),
        'the worker registers them again by itself'
      )
      assert.isTrue(await until(async () => (await health()).workers?.length === 1, 5_000))
      report = await health()
      assert.equal(report.status, 'ok')
      assert.isString(report.workers[0].restored_at)
    } finally {
      assert.equal(await worker.stop(), 0)
    }
    // A stopped worker withdraws its report.
    assert.deepEqual((await health()).workers, [])
  })

  test('with no worker, /health stays 200 but says degraded and names the missing schedules', async ({
    assert,
  }) => {
    const response = await rawRequest('/health', { method: 'GET' })
    assert.equal(response.status, 200)
    assert.isTrue(response.json.healthy)
    assert.equal(response.json.status, 'degraded')
    assert.equal(response.json.schedules.status, 'missing')
    assert.sameMembers(response.json.schedules.missing, [
      'sweep-expired-payments',
      'release-overdue-holds',
      'sweep-payouts',
      'dispatch-pending-callbacks',
      'settle-payments',
      'sweep-credentials',
      'sweep-pending-slips',
      'sweep-approval-requests',
      'verify-reconciliation',
      'verify-ledger',
      'purge-merchant-requests',
      'seal-audit-log',
      'verify-audit-chain',
      'mail-notifications',
      'fetch-statements',
    ])
    assert.deepEqual(response.json.workers, [])
  })
})
