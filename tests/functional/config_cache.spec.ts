import { test } from '@japa/runner'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'
import { assertError } from '#tests/helpers/envelope'
import { refusedWithin } from '#tests/helpers/http'
import {
  TEST_ACTOR,
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let sequence = 0
function create(who: TestMerchant, baseUrl: string) {
  return signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `CC${++sequence}`,
      amount: '100.00',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    }),
    { baseUrl }
  )
}

/**
 * Payment create reads the platform and the deposit pool from a per-process
 * cache. The second process keeps its copies for a minute
 * (CONFIG_CACHE_TTL_MS), so only the change announced through Redis can make
 * it refuse within the second these tests allow.
 */
test.group('configuration cache across processes', (group) => {
  let second: SecondGateway
  group.setup(async () => {
    second = await startSecondGateway({ env: { CONFIG_CACHE_TTL_MS: '60000' } })
    return () => second.stop()
  })
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('the killswitch set in one process stops creates in the other within a second', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    assert.equal((await create(who, second.url)).status, 200)
    // Its first request subscribed it; give Redis a moment to confirm.
    await sleep(300)
    assert.equal((await create(who, second.url)).status, 200)

    await configurePlatform({ code: 'test', deposit_enabled: false }, TEST_ACTOR)
    const { response, elapsed } = await refusedWithin(() => create(who, second.url))
    assertError(assert, response, 503, 'service-unavailable')
    assert.deepEqual(response.json.data, { code: 'killswitch_off' })
    assert.isBelow(elapsed, 1000)
  })

  test('an account added in one process is offered by the other within a second', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    // The second process caches the group without any account.
    assertError(assert, await create(who, second.url), 503, 'service-unavailable')
    await sleep(300)
    assertError(assert, await create(who, second.url), 503, 'service-unavailable')

    await createDepositAccount({ channel: 'qr' })
    const started = Date.now()
    let response = await create(who, second.url)
    while (response.status !== 200 && Date.now() - started < 1000) {
      await sleep(25)
      response = await create(who, second.url)
    }
    assert.equal(response.status, 200, response.text)
    assert.isBelow(Date.now() - started, 1000)
  })
})
