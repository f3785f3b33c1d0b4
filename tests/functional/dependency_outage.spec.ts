import { test } from '@japa/runner'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { Redis } from 'ioredis'
import { redisOptions } from '#core/redis'
import db from '@adonisjs/lucid/services/db'
import mysql from 'mysql2/promise'
import { serverConnection } from '#config/database'
import { dependencyOutage } from '#exceptions/dependency_outage'
import { assertError } from '#tests/helpers/envelope'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import { authBody, createTestMerchant, resetDatabase, signedPost } from '#tests/helpers/merchants'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'
import { STACK_OR_PATH } from '#tests/helpers/leaks'

/** A port with nothing listening: connections are refused at once. */
async function closedPort() {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A server that accepts connections and never says a word: a hung database. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

function assertUnavailable(assert: any, response: RawResponse, elapsedMs: number, limitMs: number) {
  assertError(assert, response, 503, 'service-unavailable', /retry/i)
  const requestId = String(response.headers['x-request-id'])
  assert.match(requestId, /^[0-9a-f-]{36}$/)
  assert.include(response.json.message, requestId)
  assert.equal(response.headers['retry-after'], '5')
  assert.isBelow(elapsedMs, limitMs)
  for (const leak of [...STACK_OR_PATH, /ECONNREFUSED|ETIMEDOUT|127\.0\.0\.1|select/i]) {
    assert.notMatch(response.text, leak)
  }
}

async function timed<T>(operation: () => Promise<T>) {
  const started = performance.now()
  const result = await operation()
  return { result, elapsedMs: performance.now() - started }
}

test.group('dependency outage: database down', (group) => {
  let gateway: SecondGateway
  group.setup(async () => {
    gateway = await startSecondGateway({
      env: { DB_PORT: String(await closedPort()), LOG_LEVEL: 'info' },
      anyHealthAnswer: true,
    })
    return () => gateway.stop()
  })
  group.each.setup(() => resetDatabase())

  test('a merchant call answers 503 service-unavailable at once, quoting the request id', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const { result, elapsedMs } = await timed(() =>
      signedPost('/balance', who, authBody(who), { baseUrl: gateway.url })
    )
    assertUnavailable(assert, result, elapsedMs, 2000)

    // Logged as an outage: a warn line naming the cause, no stack anywhere.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const lines = gateway
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line))
    const requestId = String(result.headers['x-request-id'])
    const outage = lines.find((line) => line.request_id === requestId && line.level === 40)
    assert.exists(outage)
    assert.equal(outage.cause, 'ECONNREFUSED')
    assert.notExists(lines.find((line) => line.level >= 50))
    assert.notInclude(gateway.output(), '    at ')
  })

  test('/health answers 503 quickly', async ({ assert }) => {
    const { result, elapsedMs } = await timed(() =>
      rawRequest('/health', { method: 'GET', baseUrl: gateway.url })
    )
    assert.equal(result.status, 503)
    assert.equal(result.json.checks.mysql.status, 'down')
    assert.isBelow(elapsedMs, 2500)
  })

  test('the hosted payment page is a friendly 503 page', async ({ assert }) => {
    const response = await rawRequest('/pay/0190aaaa-aaaa-7aaa-8aaa-aaaaaaaaaaaa', {
      method: 'GET',
      baseUrl: gateway.url,
    })
    assert.equal(response.status, 503)
    assert.match(response.headers['content-type'] as string, /^text\/html/)
    assert.equal(response.headers['retry-after'], '5')
    // The payment page's own policy on its error pages too (payment_page_headers.spec.ts).
    assert.match(
      String(response.headers['content-security-policy']),
      /^default-src 'none'; script-src 'nonce-/
    )
    assert.equal(response.headers['cache-control'], 'no-store')
    assert.notInclude(response.text, 'An error has occurred')
    for (const leak of STACK_OR_PATH) assert.notMatch(response.text, leak)
    assert.include(response.text, String(response.headers['x-request-id']))
  })
})

test.group('dependency outage: database hung', (group) => {
  let gateway: SecondGateway
  let hung: Awaited<ReturnType<typeof silentServer>>
  group.setup(async () => {
    hung = await silentServer()
    gateway = await startSecondGateway({
      env: { DB_PORT: String(hung.port) },
      anyHealthAnswer: true,
    })
    return async () => {
      await gateway.stop()
      await hung.close()
    }
  })
  group.each.setup(() => resetDatabase())

  test('a database that never answers fails fast: 503 within the connect timeout', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const { result, elapsedMs } = await timed(() =>
      signedPost('/balance', who, authBody(who), { baseUrl: gateway.url })
    )
    assertUnavailable(assert, result, elapsedMs, 3500)
  }).timeout(15_000)
})

test.group('dependency outage: errors of the real drivers are recognised', () => {
  test('MySQL: refused, timed out, lost connection, pool acquire timeout', async ({ assert }) => {
    const refused = await mysql
      .createConnection({ ...serverConnection, port: await closedPort() })
      .catch((error) => error)
    assert.equal(dependencyOutage(refused), 'ECONNREFUSED')

    const hung = await silentServer()
    try {
      const timedOut = await mysql
        .createConnection({ ...serverConnection, port: hung.port, connectTimeout: 100 })
        .catch((error) => error)
      assert.equal(dependencyOutage(timedOut), 'ETIMEDOUT')

      db.manager.add('hung', {
        client: 'mysql2',
        connection: { ...serverConnection, port: hung.port },
        pool: { min: 0, max: 1, acquireTimeoutMillis: 100 },
      })
      const acquire = await db
        .connection('hung')
        .rawQuery('SELECT 1')
        .catch((error) => error)
      assert.equal(dependencyOutage(acquire), 'KnexTimeoutError')
      await db.manager.close('hung', true)
    } finally {
      await hung.close()
    }

    const victim = await mysql.createConnection(serverConnection)
    const killer = await mysql.createConnection(serverConnection)
    victim.on('error', () => {})
    await killer.query(`KILL ${victim.threadId}`)
    await killer.end()
    const lost = await victim.query('SELECT 1').catch((error) => error)
    assert.isDefined(dependencyOutage(lost), String(lost?.code ?? lost))
    victim.destroy()
  })

  test('MySQL: a transaction whose connection dropped refuses its next query as an outage', async ({
    assert,
  }) => {
    // knex ends a transaction whose SAVEPOINT/COMMIT/ROLLBACK failed and then
    // refuses its queries with "Transaction query already complete" instead
    // of the connection error (seen with MariaDB killed under load).
    const killer = await mysql.createConnection(serverConnection)
    try {
      const refused = await db
        .transaction(async (trx) => {
          const inner = await trx.transaction()
          const [rows] = await inner.rawQuery('SELECT CONNECTION_ID() AS id')
          await killer.query(`KILL ${rows[0].id}`)
          await inner.commit().catch(() => {})
          return inner.rawQuery('SELECT 1')
        })
        .catch((error) => error)
      assert.match(String(refused?.message), /Transaction query already complete/)
      assert.isDefined(dependencyOutage(refused))
    } finally {
      await killer.end()
    }
  })

  test('Redis: closed connection, offline, retries exhausted', async ({ assert }) => {
    const closed = new Redis(redisOptions())
    await closed.connect()
    await closed.quit()
    assert.isDefined(dependencyOutage(await closed.ping().catch((error) => error)))

    const port = await closedPort()
    const offline = new Redis({
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    })
    assert.isDefined(dependencyOutage(await offline.ping().catch((error) => error)))
    offline.disconnect()

    const retrying = new Redis({ port, maxRetriesPerRequest: 0, retryStrategy: () => 50 })
    retrying.on('error', () => {})
    const exhausted = await retrying.ping().catch((error) => error)
    assert.equal(dependencyOutage(exhausted), 'MaxRetriesPerRequestError')
    retrying.disconnect()

    const hung = await silentServer()
    const stuck = new Redis({ port: hung.port, commandTimeout: 100, retryStrategy: () => null })
    stuck.on('error', () => {})
    assert.isDefined(dependencyOutage(await stuck.ping().catch((error) => error)))
    stuck.disconnect()
    await hung.close()
  })

  test('ordinary errors are not outages', async ({ assert }) => {
    const connection = await mysql.createConnection(serverConnection)
    const syntax = await connection.query('SELEC 1').catch((error) => error)
    await connection.end()
    assert.isUndefined(dependencyOutage(syntax))
    assert.isUndefined(dependencyOutage(new TypeError('x is undefined')))
    assert.isUndefined(dependencyOutage(undefined))
    assert.isUndefined(dependencyOutage('ECONNREFUSED'))
  })
})
