import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import db from '@adonisjs/lucid/services/db'
import { databaseName } from '#config/database'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'
import { STACK_OR_PATH } from '#tests/helpers/leaks'

const UNKNOWN_HTML_ROUTES = [
  '/pay/',
  '/pay/x/y',
  '/pay/0190aaaa-aaaa-7aaa-8aaa-aaaaaaaaaaaa/nothing',
  '/admin/nothing/deeper',
  '/admin/nothing',
  '/sandbox/zz',
]

function assertPlainPage(assert: Assert, response: RawResponse, status: number, label: string) {
  assert.equal(response.status, status, `${label}: ${response.text.slice(0, 300)}`)
  assert.match(response.headers['content-type'] as string, /^text\/html/, label)
  assert.notInclude(response.text, 'An error has occurred', label)
  for (const leak of STACK_OR_PATH) assert.notMatch(response.text, leak, label)
  assert.isBelow(response.text.length, 20_000, label)
}

/** An open order whose stored QR payload cannot be drawn: the page crashes for real. */
async function orderWithBrokenQr() {
  const who = await createDepositMerchant()
  await createDepositAccount({ channel: 'qr' })
  const created = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: 'PAGE1',
      amount: '100.00',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
      notify_url: 'https://merchant.example.test/callback',
    })
  )
  const uuid = created.json.data.uuid
  await db
    .from('payment_orders')
    .where('uuid', uuid)
    .update({ qrcode: 'x'.repeat(8000) })
  return uuid as string
}

test.group('HTML error pages', (group) => {
  let development: SecondGateway
  group.setup(async () => {
    development = await startSecondGateway({
      // Development reads DB_DATABASE: point it at this run's test database.
      env: { NODE_ENV: 'development', DB_DATABASE: databaseName },
    })
    return () => development.stop()
  })
  group.each.setup(() => resetDatabase())

  test('an unknown route under /pay/, /sandbox/ or /admin is a plain 404 page in every mode', async ({
    assert,
  }) => {
    for (const baseUrl of [development.url, undefined]) {
      for (const path of UNKNOWN_HTML_ROUTES) {
        for (const accept of ['text/html', 'application/json']) {
          const response = await rawRequest(path, {
            method: 'GET',
            baseUrl,
            headers: { accept },
          })
          assertPlainPage(assert, response, 404, `${baseUrl ?? 'test'} ${path} ${accept}`)
        }
      }
      // A method the route does not have is not found either, and not a crash.
      const post = await rawRequest('/pay/0190aaaa-aaaa-7aaa-8aaa-aaaaaaaaaaaa', {
        baseUrl,
        body: '{}',
      })
      assertPlainPage(assert, post, 404, 'POST on the payment page')
    }
  })

  test('a real exception: developer page in development only, a plain 500 page otherwise', async ({
    assert,
  }) => {
    const uuid = await orderWithBrokenQr()

    const plain = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assertPlainPage(assert, plain, 500, 'test mode')
    assert.include(plain.text, String(plain.headers['x-request-id']))

    const developer = await rawRequest(`/pay/${uuid}`, {
      method: 'GET',
      baseUrl: development.url,
    })
    assert.equal(developer.status, 500)
    assert.include(developer.text, 'An error has occurred')
  })
})
