import { test } from '@japa/runner'
import { ace, aceProcess } from '#tests/helpers/ace'
import Merchant from '#merchants/models/merchant'
import { authBody, resetDatabase, signedPost } from '#tests/helpers/merchants'
import { whitelistFor } from '#merchants/ip_whitelist'

/**
 * The commands against the test database, as an operator types them: the first
 * test in real `node ace` processes, the others through the same kernel in the
 * test process.
 */

test.group('operator commands', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('platform:create and merchant:create --json issue working credentials', async ({
    assert,
  }) => {
    const platform = await aceProcess(
      'platform:create',
      '--code=shop',
      '--name=Shop platform',
      '--payment-page-domain=pay.shop.test'
    )
    assert.equal(platform.code, 0, platform.stderr + platform.stdout)

    const created = await aceProcess(
      'merchant:create',
      '--platform=shop',
      '--name=Shop One',
      '--prefix=SH1',
      '--json'
    )
    assert.equal(created.code, 0, created.stderr + created.stdout)
    const credentials = JSON.parse(created.stdout.trim().split('\n').pop()!)
    assert.match(credentials.merchant_id, /^[A-Za-z0-9]*\d$/)
    assert.lengthOf(credentials.token, 40)
    assert.lengthOf(credentials.secret, 48)
    assert.equal(credentials.order_prefix, 'SH1')

    const merchant = await Merchant.findByOrFail('merchant_id', credentials.merchant_id)
    const who = {
      merchant,
      merchantId: merchant.merchantId,
      token: credentials.token,
      secret: credentials.secret,
    }
    const response = await signedPost('/balance', who, authBody(who))
    assert.equal(response.status, 200, response.text)
  })

  test('merchant:create refuses an unknown platform and a taken prefix', async ({ assert }) => {
    const missing = await ace('merchant:create', '--platform=nope', '--name=X')
    assert.notEqual(missing.code, 0)
    assert.include(missing.stdout + missing.stderr, 'does not exist')

    await ace('platform:create', '--code=shop')
    await ace('merchant:create', '--platform=shop', '--name=A', '--prefix=AAA')
    const taken = await ace('merchant:create', '--platform=shop', '--name=B', '--prefix=AAA')
    assert.notEqual(taken.code, 0)
    assert.include(taken.stdout + taken.stderr, 'taken')
  })

  test('merchant:rotate prints new values once and merchant:ip-whitelist edits the list', async ({
    assert,
  }) => {
    await ace('platform:create', '--code=shop')
    const created = JSON.parse(
      (await ace('merchant:create', '--platform=shop', '--name=Shop', '--json')).stdout
        .trim()
        .split('\n')
        .pop()!
    )

    const rotated = await ace(
      'merchant:rotate',
      created.merchant_id,
      '--secret',
      '--grace=0',
      '--json'
    )
    assert.equal(rotated.code, 0, rotated.stderr + rotated.stdout)
    const values = JSON.parse(rotated.stdout.trim().split('\n').pop()!)
    assert.lengthOf(values.secret, 48)
    assert.notProperty(values, 'token')

    const merchant = await Merchant.findByOrFail('merchant_id', created.merchant_id)
    const oldPair = {
      merchant,
      merchantId: merchant.merchantId,
      token: created.token,
      secret: created.secret,
    }
    assert.equal(
      (await signedPost('/balance', oldPair, authBody(oldPair))).json.error,
      'signature-error'
    )
    const newPair = { ...oldPair, secret: values.secret }
    assert.equal((await signedPost('/balance', newPair, authBody(newPair))).status, 200)

    const added = await ace(
      'merchant:ip-whitelist',
      created.merchant_id,
      '--add=203.0.113.7',
      '--add=198.51.100.0/24'
    )
    assert.equal(added.code, 0, added.stderr + added.stdout)
    assert.deepEqual(await whitelistFor(merchant.id), ['203.0.113.7/32', '198.51.100.0/24'])
    const removed = await ace('merchant:ip-whitelist', created.merchant_id, '--remove=203.0.113.7')
    assert.equal(removed.code, 0)
    assert.deepEqual(await whitelistFor(merchant.id), ['198.51.100.0/24'])
    const bad = await ace('merchant:ip-whitelist', created.merchant_id, '--add=not-an-ip')
    assert.notEqual(bad.code, 0)

    const unknown = await ace('merchant:rotate', 'NOSUCH1')
    assert.notEqual(unknown.code, 0)
  })
})
