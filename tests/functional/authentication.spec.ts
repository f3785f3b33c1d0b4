import { test } from '@japa/runner'
import { assertError } from '#tests/helpers/envelope'
import db from '@adonisjs/lucid/services/db'
import { signBody } from '#merchants/credentials'
import { epochSeconds } from '#core/clock'
import { rawRequest } from '#tests/helpers/http'
import {
  TEST_ACTOR,
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { editIpWhitelist } from '#merchants/actions/edit_ip_whitelist'

function allowSources(who: TestMerchant, ...cidrs: string[]) {
  return editIpWhitelist({ merchant_id: who.merchantId, add: cidrs }, TEST_ACTOR)
}

test.group('merchant authentication: the spec error table', (group) => {
  group.each.setup(() => resetDatabase())

  test('a correctly signed request is accepted', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await signedPost('/balance', who, authBody(who))
    assert.equal(response.status, 200, response.text)
    assert.isTrue(response.json.success)
  })

  test('405 method-not-allowed for non-POST methods', async ({ assert }) => {
    const who = await createTestMerchant()
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const response = await rawRequest('/balance', {
        method,
        body: authBody(who),
        headers: {
          'content-type': 'application/json',
          'x-signature': signBody(who.secret, authBody(who)),
        },
      })
      assertError(assert, response, 405, 'method-not-allowed')
      assert.equal(response.headers['allow'], 'POST')
    }
  })

  test('403 authentication-failed: merchant_id missing, malformed or unknown', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const bodies = [
      JSON.stringify({ token: who.token, time: epochSeconds() }),
      JSON.stringify({ merchant_id: '', token: who.token, time: epochSeconds() }),
      JSON.stringify({ merchant_id: 12345, token: who.token, time: epochSeconds() }),
      JSON.stringify({ merchant_id: 'M-1; DROP', token: who.token, time: epochSeconds() }),
      JSON.stringify({ merchant_id: 'NOSUCH1', token: who.token, time: epochSeconds() }),
    ]
    for (const body of bodies) {
      assertError(assert, await signedPost('/balance', who, body), 403, 'authentication-failed')
    }
  })

  test("403 authentication-failed: token missing or mismatching (also another merchant's token)", async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const other = await createTestMerchant()
    const bodies = [
      JSON.stringify({ merchant_id: who.merchantId, time: epochSeconds() }),
      JSON.stringify({ merchant_id: who.merchantId, token: who.token + 'x', time: epochSeconds() }),
      JSON.stringify({
        merchant_id: who.merchantId,
        token: who.token.toLowerCase(),
        time: epochSeconds(),
      }),
      JSON.stringify({ merchant_id: who.merchantId, token: other.token, time: epochSeconds() }),
    ]
    for (const body of bodies) {
      assertError(assert, await signedPost('/balance', who, body), 403, 'authentication-failed')
    }
  })

  test('403 authentication-failed: suspended merchant', async ({ assert }) => {
    const who = await createTestMerchant()
    await db.from('merchants').where('id', who.merchant.id).update({ status: 'suspended' })
    assertError(
      assert,
      await signedPost('/balance', who, authBody(who)),
      403,
      'authentication-failed'
    )
  })

  test('403 signature-required when X-SIGNATURE is missing', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await rawRequest('/balance', {
      body: authBody(who),
      headers: { 'content-type': 'application/json' },
    })
    assertError(assert, response, 403, 'signature-required')
  })

  test('token is checked before the signature (spec verification order)', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await rawRequest('/balance', {
      body: JSON.stringify({ merchant_id: who.merchantId, token: 'wrong', time: epochSeconds() }),
      headers: { 'content-type': 'application/json' },
    })
    assertError(assert, response, 403, 'authentication-failed')
  })

  test("403 signature-error: wrong secret, uppercase hex, truncated, another merchant's secret", async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const other = await createTestMerchant()
    const body = authBody(who)
    const good = signBody(who.secret, body)
    for (const signature of [
      signBody('not-the-secret', body),
      good.toUpperCase(),
      good.slice(0, 63),
      good + '0',
      signBody(other.secret, body),
      'zz',
    ]) {
      const response = await rawRequest('/balance', {
        body,
        headers: { 'content-type': 'application/json', 'x-signature': signature },
      })
      assertError(assert, response, 403, 'signature-error')
    }
  })

  test('403 ip-not-whitelisted when the source IP is not listed', async ({ assert }) => {
    const who = await createTestMerchant()
    await allowSources(who, '198.51.100.0/24')
    const response = await signedPost('/balance', who, authBody(who), { localAddress: '127.0.0.2' })
    assertError(assert, response, 403, 'ip-not-whitelisted')
    assert.include(response.json.message, '127.0.0.2')
  })

  test('400 invalid-inputs when the body is missing or not JSON', async ({ assert }) => {
    const who = await createTestMerchant()
    for (const body of [
      undefined,
      '',
      'merchant_id=1',
      '{"merchant_id":',
      '[1,2]',
      '"text"',
      'null',
    ]) {
      const response = await rawRequest('/balance', {
        body,
        headers: {
          'content-type': 'application/json',
          'x-signature': signBody(who.secret, body ?? ''),
        },
      })
      assertError(assert, response, 400, 'invalid-inputs')
    }
  })
})

test.group('merchant authentication: signature over the exact bytes', (group) => {
  group.each.setup(() => resetDatabase())

  test('a body re-serialised with other whitespace or key order fails', async ({ assert }) => {
    const who = await createTestMerchant()
    const time = epochSeconds()
    const sent = JSON.stringify({ merchant_id: who.merchantId, token: who.token, time })
    const signature = signBody(who.secret, sent)
    const variants = [
      JSON.stringify({ merchant_id: who.merchantId, token: who.token, time }, null, 2),
      JSON.stringify({ token: who.token, merchant_id: who.merchantId, time }),
      sent + '\n',
      sent.replace('"time":', '"time": '),
    ]
    for (const body of variants) {
      const response = await rawRequest('/balance', {
        body,
        headers: { 'content-type': 'application/json', 'x-signature': signature },
      })
      assertError(assert, response, 403, 'signature-error')
    }
    // The original bytes still verify.
    const ok = await rawRequest('/balance', {
      body: sent,
      headers: { 'content-type': 'application/json', 'x-signature': signature },
    })
    assert.equal(ok.status, 200)
  })

  test('non-ASCII UTF-8 in the body verifies, while its \\u-escaped twin does not', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const utf8Body = `{"merchant_id":"${who.merchantId}","token":"${who.token}","time":${epochSeconds()},"note":"ร้านค้า ทดสอบ ✓ 😀"}`
    const response = await signedPost('/balance', who, utf8Body)
    assert.equal(response.status, 200, response.text)

    const escaped = utf8Body.replace(/[\u0080-\u{10FFFF}]/gu, (c) =>
      [...c].map((u) => '\\u' + u.charCodeAt(0).toString(16).padStart(4, '0')).join('')
    )
    const mismatched = await rawRequest('/balance', {
      body: escaped,
      headers: {
        'content-type': 'application/json',
        'x-signature': signBody(who.secret, Buffer.from(utf8Body)),
      },
    })
    assertError(assert, mismatched, 403, 'signature-error')
  })

  test('bytes that are not UTF-8 are refused as invalid input', async ({ assert }) => {
    const who = await createTestMerchant()
    const body = Buffer.concat([
      Buffer.from(authBody(who).slice(0, -1) + ',"x":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ])
    const response = await rawRequest('/balance', {
      body,
      headers: { 'content-type': 'application/json', 'x-signature': signBody(who.secret, body) },
    })
    assertError(assert, response, 400, 'invalid-inputs')
  })
})

test.group('merchant authentication: time tolerance', (group) => {
  group.each.setup(() => resetDatabase())

  test('time as a number or a string within 300 s is accepted', async ({ assert }) => {
    const who = await createTestMerchant()
    for (const time of [
      epochSeconds(),
      String(epochSeconds()),
      epochSeconds() - 290,
      epochSeconds() + 290,
    ]) {
      const response = await signedPost('/balance', who, authBody(who, {}, time))
      assert.equal(response.status, 200, `time ${time}: ${response.text}`)
    }
  })

  test('time outside the tolerance is refused', async ({ assert }) => {
    const who = await createTestMerchant()
    for (const time of [epochSeconds() - 301, epochSeconds() + 310, 0]) {
      assertError(
        assert,
        await signedPost('/balance', who, authBody(who, {}, time)),
        403,
        'authentication-failed'
      )
    }
  })

  test('time missing or not epoch seconds is invalid input', async ({ assert }) => {
    const who = await createTestMerchant()
    const bodies = [
      JSON.stringify({ merchant_id: who.merchantId, token: who.token }),
      authBody(who, {}, 'yesterday'),
      authBody(who, {}, new Date().toISOString()),
      authBody(who, {}, -5),
      authBody(who, {}, null),
    ]
    for (const body of bodies) {
      assertError(assert, await signedPost('/balance', who, body), 400, 'invalid-inputs')
    }
  })
})

test.group('merchant authentication: IP whitelist and proxies', (group) => {
  group.each.setup(() => resetDatabase())

  test('a listed address or block is accepted; no whitelist accepts all', async ({ assert }) => {
    const who = await createTestMerchant()
    assert.equal(
      (await signedPost('/balance', who, authBody(who), { localAddress: '127.0.0.3' })).status,
      200
    )
    await allowSources(who, '127.0.0.2', '127.0.1.0/24')
    assert.equal(
      (await signedPost('/balance', who, authBody(who), { localAddress: '127.0.0.2' })).status,
      200
    )
    assert.equal(
      (await signedPost('/balance', who, authBody(who), { localAddress: '127.0.1.9' })).status,
      200
    )
    assertError(
      assert,
      await signedPost('/balance', who, authBody(who), { localAddress: '127.0.0.3' }),
      403,
      'ip-not-whitelisted'
    )
  })

  test('X-Forwarded-For is believed from a trusted proxy only', async ({ assert }) => {
    const who = await createTestMerchant()
    await allowSources(who, '203.0.113.9')

    // 127.0.0.1 is the trusted proxy in the test configuration.
    const viaProxy = await signedPost('/balance', who, authBody(who), {
      localAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.9' },
    })
    assert.equal(viaProxy.status, 200, viaProxy.text)

    const viaProxyOtherClient = await signedPost('/balance', who, authBody(who), {
      localAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.10' },
    })
    assertError(assert, viaProxyOtherClient, 403, 'ip-not-whitelisted')

    // Anyone else claiming to forward for a whitelisted address is judged by its own address.
    const forged = await signedPost('/balance', who, authBody(who), {
      localAddress: '127.0.0.2',
      headers: { 'x-forwarded-for': '203.0.113.9' },
    })
    assertError(assert, forged, 403, 'ip-not-whitelisted')
    assert.include(forged.json.message, '127.0.0.2')
  })
})

test.group('merchant authentication: HTTPS only', (group) => {
  group.each.setup(() => resetDatabase())

  test('plain HTTP is refused with https-required before anything else', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await signedPost('/balance', who, authBody(who), {
      plainHttp: true,
      localAddress: '127.0.0.2',
    })
    assertError(assert, response, 403, 'https-required')
    const get = await rawRequest('/balance', { method: 'GET', plainHttp: true })
    assertError(assert, get, 403, 'https-required')
  })

  test('a trusted proxy may declare HTTPS with X-Forwarded-Proto; others may not', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const trusted = await signedPost('/balance', who, authBody(who), {
      plainHttp: true,
      localAddress: '127.0.0.1',
      headers: { 'x-forwarded-proto': 'https' },
    })
    assert.equal(trusted.status, 200, trusted.text)
    const untrusted = await signedPost('/balance', who, authBody(who), {
      plainHttp: true,
      localAddress: '127.0.0.2',
      headers: { 'x-forwarded-proto': 'https' },
    })
    assertError(assert, untrusted, 403, 'https-required')
    const plainFromProxy = await signedPost('/balance', who, authBody(who), {
      plainHttp: true,
      localAddress: '127.0.0.1',
    })
    assertError(assert, plainFromProxy, 403, 'https-required')
  })

  test('/health answers on plain HTTP for load balancers', async ({ assert }) => {
    const response = await rawRequest('/health', { method: 'GET', plainHttp: true })
    assert.equal(response.status, 200)
  })
})
