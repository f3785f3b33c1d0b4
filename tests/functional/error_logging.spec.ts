import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createTestMerchant,
  resetDatabase,
  signedPost,
  updatePlatforms,
} from '#tests/helpers/merchants'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'

const ORDER = {
  merchant_order_id: 'LOG1',
  amount: '100.00',
  bank: 'SCB',
  account_name: 'Somchai Jaidee',
  account_no: '1234567890',
  notify_url: 'https://merchant.example.test/callback',
}

/** The log lines (pino JSON) a request id produced in the second process. */
async function linesFor(gateway: SecondGateway, requestId: string) {
  // The request line is written on 'finish'; give the pipe a moment.
  await new Promise((resolve) => setTimeout(resolve, 200))
  return gateway
    .output()
    .split('\n')
    .filter((line) => line.includes(requestId))
    .map((line) => JSON.parse(line))
}

test.group('error logging levels', (group) => {
  let gateway: SecondGateway
  group.setup(async () => {
    gateway = await startSecondGateway({ env: { LOG_LEVEL: 'info' } })
    return () => gateway.stop()
  })
  group.each.setup(() => resetDatabase())

  test('business refusals (killswitch 503, 429, 4xx) are info lines without a stack', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', hourlyCountLimit: 0 })
    await updatePlatforms({ depositEnabled: false })
    // Each request its own merchant_order_id: identical signed bytes would get the first answer again.
    const killswitch = await signedPost('/payment/create', who, authBody(who, ORDER), {
      baseUrl: gateway.url,
    })
    assertError(assert, killswitch, 503, 'service-unavailable')

    await updatePlatforms({ depositEnabled: true })
    const limited = await signedPost(
      '/payment/create',
      who,
      authBody(who, { ...ORDER, merchant_order_id: 'LOG2' }),
      { baseUrl: gateway.url }
    )
    assertError(assert, limited, 429, 'channel-limit-reached')
    await account.delete()

    const invalid = await signedPost('/payment/create', who, authBody(who, { amount: 'x' }), {
      baseUrl: gateway.url,
    })
    assertError(assert, invalid, 400, 'invalid-inputs')

    for (const response of [killswitch, limited, invalid]) {
      const lines = await linesFor(gateway, String(response.headers['x-request-id']))
      assert.isAbove(lines.length, 0)
      for (const line of lines) {
        assert.equal(line.level, 30, JSON.stringify(line))
        assert.notProperty(line, 'err')
        assert.notInclude(JSON.stringify(line), 'stack')
      }
      const outcome = lines.find((line) => line.error === response.json.error)
      assert.exists(outcome, 'the refusal is logged with its identifier')
      assert.equal(outcome.status, response.status)
    }
  })

  test('an unexpected error is still an error line with its stack', async ({ assert }) => {
    const who = await createTestMerchant()
    await db
      .from('merchant_credentials')
      .where('merchant_id', who.merchant.id)
      .update({ secret_encrypted: 'damaged' })
    const response = await signedPost('/balance', who, authBody(who), { baseUrl: gateway.url })
    assertError(assert, response, 500, 'internal-server-error')
    const lines = await linesFor(gateway, String(response.headers['x-request-id']))
    const failure = lines.find((line) => line.level === 50)
    assert.exists(failure)
    assert.isString(failure.err.stack)
  })
})
