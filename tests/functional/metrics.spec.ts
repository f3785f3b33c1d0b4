import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import router from '@adonisjs/core/services/router'
import db from '@adonisjs/lucid/services/db'
import { Queue, UnrecoverableError, Worker } from 'bullmq'
import { SYSTEM } from '#core/actor'
import { bullConnection, queuePrefix } from '#core/queue/queue_manager'
import { runReconciliationCheck } from '#reconciliation/verify/index'
import { runLedgerCheck } from '#ledger/verify'
import { startSecondGateway } from '#tests/helpers/second_process'
import { closedPort } from '#tests/helpers/ports'
import { rawRequest } from '#tests/helpers/http'
import { until } from '#tests/helpers/worker'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createTestMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'
import { startMetricsServer, type MetricsServer } from '#metrics/metrics_server'
import { observeWorkers } from '#metrics/job_metrics'
import { forgetCachedSources } from '#metrics/sources'

interface Sample {
  labels: Record<string, string>
  value: number
}

async function scrape(port: number) {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  }
}

/** The samples of one series name in a Prometheus text exposition. */
function samples(text: string, name: string): Sample[] {
  const found: Sample[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const labelText = line.startsWith(`${name}{`)
      ? line.slice(name.length + 1, line.lastIndexOf('}'))
      : ''
    const labels: Record<string, string> = {}
    for (const match of labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[match[1]] = match[2]
    found.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) })
  }
  return found
}

/** The value of the sample whose labels include `wanted` (0 when there is none yet). */
function valueOf(text: string, name: string, wanted: Record<string, string>) {
  const sample = samples(text, name).find((candidate) =>
    Object.entries(wanted).every(([key, value]) => candidate.labels[key] === value)
  )
  return sample?.value ?? 0
}

test.group('GET /metrics (web process)', (group) => {
  let server: MetricsServer
  group.setup(async () => {
    server = await startMetricsServer({ port: 0, host: '127.0.0.1', role: 'web' })
    return () => server.close()
  })
  group.each.setup(() => resetDatabase())

  test('Prometheus text format on its own port; only /metrics', async ({ assert }) => {
    const { status, type, text } = await scrape(server.port)
    assert.equal(status, 200)
    assert.equal(type, 'text/plain; version=0.0.4; charset=utf-8')
    // prom-client's default process metrics, with the process label.
    assert.isAbove(valueOf(text, 'process_cpu_user_seconds_total', { process: 'web' }), 0)
    assert.include(text, '# TYPE gateway_http_request_duration_seconds histogram')
    const other = await fetch(`http://127.0.0.1:${server.port}/health`)
    assert.equal(other.status, 404)
    await other.text()
  })

  test('requests counted by route pattern, status and error identifier; no ids in labels', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const before = (await scrape(server.port)).text
    const balance = await signedPost('/balance', who, authBody(who))
    assert.equal(balance.status, 200, balance.text)
    const orderId = `P${Date.now()}`
    const missing = await signedPost(
      '/payment/query',
      who,
      authBody(who, { platform_order_id: orderId })
    )
    assert.isAtLeast(missing.status, 400)
    const identifier = missing.json.error as string
    assert.match(identifier, /^[a-z-]+$/)
    const uuid = randomUUID()
    const page = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.equal(page.status, 404)

    const after = (await scrape(server.port)).text
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels)
    const ok = { route: '/balance', method: 'POST', status: '200', error: '', process: 'web' }
    assert.equal(delta('gateway_http_requests_total', ok), 1)
    assert.equal(
      delta('gateway_http_requests_total', {
        route: '/payment/query',
        method: 'POST',
        status: String(missing.status),
        error: identifier,
      }),
      1
    )
    assert.equal(
      delta('gateway_http_requests_total', { route: '/pay/:uuid', method: 'GET', status: '404' }),
      1
    )
    assert.equal(
      delta('gateway_http_request_duration_seconds_count', { route: '/balance', method: 'POST' }),
      1
    )
    assert.isAbove(
      delta('gateway_http_request_duration_seconds_bucket', {
        route: '/balance',
        method: 'POST',
        le: '+Inf',
      }),
      0
    )

    // Routes are the router's patterns, never a URL: no id, no token.
    const patterns = new Set(
      Object.values(router.toJSON())
        .flat()
        .map((route) => route.pattern)
    )
    for (const sample of samples(after, 'gateway_http_requests_total')) {
      assert.isTrue(
        sample.labels.route === 'unmatched' || patterns.has(sample.labels.route),
        sample.labels.route
      )
    }
    for (const secret of [uuid, orderId, who.merchantId, who.token]) {
      assert.notInclude(after, secret)
    }
  })

  test('database and Redis figures: dependencies, topology, limits, review queues, verify', async ({
    assert,
  }) => {
    const account = await createDepositAccount({ channel: 'transfer', dailyCountLimit: 4 })
    forgetCachedSources()
    let text = (await scrape(server.port)).text
    assert.equal(valueOf(text, 'gateway_dependency_up', { dependency: 'mysql' }), 1)
    assert.equal(valueOf(text, 'gateway_dependency_up', { dependency: 'redis' }), 1)
    // The test MariaDB is one server, Redis its own master.
    assert.equal(valueOf(text, 'gateway_db_topology', { mode: 'standalone' }), 1)
    assert.equal(valueOf(text, 'gateway_db_read_only', {}), 0)
    assert.equal(valueOf(text, 'gateway_redis_role', { role: 'master' }), 1)
    assert.equal(valueOf(text, 'gateway_reconciliation_verify_ok', {}), -1)
    assert.equal(valueOf(text, 'gateway_ledger_verify_ok', {}), -1)
    assert.equal(valueOf(text, 'gateway_review_queue_items', { queue: 'frozen' }), 0)
    for (const queue of ['payments', 'payouts', 'callbacks', 'reconciliation', 'operations']) {
      assert.lengthOf(
        samples(text, 'gateway_queue_jobs').filter((sample) => sample.labels.queue === queue),
        7
      )
    }
    const usage = { account: String(account.id), period: 'day', measure: 'count' }
    assert.lengthOf(
      samples(text, 'gateway_deposit_account_usage_ratio').filter(
        (sample) => sample.labels.account === String(account.id)
      ),
      1
    )
    assert.isAbove(valueOf(text, 'gateway_db_pool_connections', { state: 'max' }), 0)

    // One payment on the account, one recorded verify run.
    const who = await createDepositMerchant()
    const payment = await signedPost(
      '/payment/create-transfer',
      who,
      authBody(who, {
        merchant_order_id: 'M1',
        amount: '100.00',
        bank: 'SCB',
        account_name: 'Somchai Jaidee',
        account_no: '123-4-56789-0',
      })
    )
    assert.equal(payment.status, 200, payment.text)
    await runReconciliationCheck(SYSTEM)

    // Cached: the same figures until the cache period ends...
    text = (await scrape(server.port)).text
    assert.equal(valueOf(text, 'gateway_deposit_account_usage_ratio', usage), 0)
    // ...then read again.
    forgetCachedSources()
    text = (await scrape(server.port)).text
    assert.equal(valueOf(text, 'gateway_deposit_account_usage_ratio', usage), 0.25)
    assert.equal(valueOf(text, 'gateway_reconciliation_verify_ok', {}), 1)
    assert.isBelow(valueOf(text, 'gateway_reconciliation_verify_age_seconds', {}), 60)

    // ledger:verify as the worker runs it: green, then red once a balance leaves its entries.
    await runLedgerCheck(SYSTEM)
    forgetCachedSources()
    text = (await scrape(server.port)).text
    assert.equal(valueOf(text, 'gateway_ledger_verify_ok', {}), 1)
    assert.equal(valueOf(text, 'gateway_ledger_verify_drifts', {}), 0)
    assert.isBelow(valueOf(text, 'gateway_ledger_verify_age_seconds', {}), 60)
    await db.rawQuery('UPDATE merchant_balances SET balance = balance + 1 WHERE merchant_id = ?', [
      who.merchant.id,
    ])
    await runLedgerCheck(SYSTEM)
    forgetCachedSources()
    text = (await scrape(server.port)).text
    assert.equal(valueOf(text, 'gateway_ledger_verify_ok', {}), 0)
    assert.equal(valueOf(text, 'gateway_ledger_verify_drifts', {}), 1)
  })

  test('job durations and failures of observed workers', async ({ assert }) => {
    const name = `metrics-test-${process.pid}`
    const connection = bullConnection()
    const workerConnection = bullConnection()
    const jobs = new Queue(name, { connection, prefix: queuePrefix })
    const worker = new Worker(
      name,
      async (job) => {
        if (job.name === 'breaks') throw new UnrecoverableError('no')
        return 'done'
      },
      { connection: workerConnection, prefix: queuePrefix }
    )
    observeWorkers([worker])
    try {
      await jobs.add('works', {})
      await jobs.add('breaks', {})
      const read = async () => (await scrape(server.port)).text
      assert.isTrue(
        await until(
          async () =>
            valueOf(await read(), 'gateway_job_failures_total', { queue: name, job: 'breaks' }) ===
            1,
          10_000
        )
      )
      const text = await read()
      assert.equal(
        valueOf(text, 'gateway_job_failures_total', { queue: name, job: 'breaks', final: 'true' }),
        1
      )
      assert.equal(
        valueOf(text, 'gateway_job_duration_seconds_count', {
          queue: name,
          job: 'works',
          result: 'completed',
        }),
        1
      )
    } finally {
      await worker.close()
      await workerConnection.quit()
      await jobs.obliterate({ force: true })
      await jobs.close()
      await connection.quit()
    }
  })
})

/** The value of the one sample with these labels; fails when there is none. */
function presentValue(text: string, name: string, wanted: Record<string, string>) {
  const found = samples(text, name).filter((candidate) =>
    Object.entries(wanted).every(([key, value]) => candidate.labels[key] === value)
  )
  if (found.length !== 1)
    throw new Error(`${name} ${JSON.stringify(wanted)}: ${found.length} samples`)
  return found[0].value
}

test.group('GET /metrics of a web process whose dependency is unreachable', (group) => {
  group.each.timeout(90_000)

  for (const down of ['redis', 'mysql'] as const) {
    test(`the provider starts the endpoint; a scrape answers at once, ${down} down`, async ({
      assert,
    }) => {
      const metricsPort = await closedPort()
      const closed = String(await closedPort())
      const second = await startSecondGateway({
        env: {
          ...(down === 'redis' ? { REDIS_PORT: closed } : { DB_PORT: closed }),
          METRICS_PORT: String(metricsPort),
        },
        anyHealthAnswer: true,
      })
      try {
        // The endpoint opens once the app is ready, just after the API's port.
        assert.isTrue(
          await until(
            () =>
              scrape(metricsPort).then(
                () => true,
                () => false
              ),
            10_000
          )
        )
        for (let round = 0; round < 2; round++) {
          const started = Date.now()
          const { status, text } = await scrape(metricsPort)
          assert.equal(status, 200)
          assert.isBelow(Date.now() - started, 3000)
          for (const dependency of ['redis', 'mysql']) {
            assert.equal(
              presentValue(text, 'gateway_dependency_up', { dependency, process: 'web' }),
              dependency === down ? 0 : 1,
              dependency
            )
          }
        }
        // The merchant API's port does not serve it.
        const onApi = await rawRequest('/metrics', { method: 'GET', baseUrl: second.url })
        assert.equal(onApi.status, 404)
      } finally {
        await second.stop()
      }
    })
  }
})
