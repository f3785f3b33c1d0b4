import { test } from '@japa/runner'
import { amountText, formatAmount, sameAmount, toSatang } from '#client/amount'
import { signBody, verifyCallback } from '#client/signing'
import { orderKind } from '#client/types'
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  resolveRetryPolicy,
} from '#client/retry'
import { classifyNetworkError } from '#client/transport'
import { GatewayApiError, GatewayNetworkError, isApiErrorIdentifier } from '#client/errors'

test.group('merchant client: amounts', () => {
  test('toSatang reads the decimal text, never multiplies floats', ({ assert }) => {
    const cases: Array<[number | string, number]> = [
      ['100.00', 10000],
      ['100.5', 10050],
      [' 20.10 ', 2010],
      ['0', 0],
      [100, 10000],
      [20.1, 2010],
      [0.29, 29], // 0.29 * 100 is 28.999999999999996
      [1.15, 115], // 1.15 * 100 is 114.99999999999999
      [9999999999999.99, 999999999999999],
    ]
    for (const [input, satang] of cases) assert.equal(toSatang(input), satang, String(input))
    for (const bad of ['1.001', '-1', '1e3', '', '01.00', '1.', 'abc', 0.1 + 0.2, -5, Number.NaN]) {
      assert.throws(() => toSatang(bad), RangeError, /2 decimals|finite/, String(bad))
    }
    assert.throws(() => toSatang(null as unknown as string), TypeError)
  })

  test('formatAmount, amountText, sameAmount', ({ assert }) => {
    assert.equal(formatAmount(0), '0.00')
    assert.equal(formatAmount(5), '0.05')
    assert.equal(formatAmount(123450), '1234.50')
    assert.equal(formatAmount(-150), '-1.50')
    assert.throws(() => formatAmount(1.5), RangeError)
    assert.equal(amountText(100), '100.00')
    assert.equal(amountText('20.5'), '20.50')
    assert.isTrue(sameAmount(100.1, '100.10'))
    assert.isFalse(sameAmount(100.1, '100.01'))
  })
})

test.group('merchant client: retry policy', () => {
  test('resolved from a number or a partial policy, validated', ({ assert }) => {
    assert.equal(resolveRetryPolicy(undefined).retries, DEFAULT_RETRY_POLICY.retries)
    assert.equal(resolveRetryPolicy(5).retries, 5)
    const custom = resolveRetryPolicy({ retryOn: ['timeout'], windowMs: 60_000 })
    assert.deepEqual(custom.retryOn, ['timeout'])
    assert.equal(custom.windowMs, 60_000)
    assert.equal(custom.retries, DEFAULT_RETRY_POLICY.retries)
    assert.throws(() => resolveRetryPolicy(-1), RangeError)
    assert.throws(() => resolveRetryPolicy(1.5), RangeError)
    assert.throws(() => resolveRetryPolicy({ windowMs: Number.NaN }), RangeError)
  })

  test('backoff doubles up to its bound; jitter stays within [delay/2, delay]', ({ assert }) => {
    const policy = resolveRetryPolicy({ baseDelayMs: 100, maxDelayMs: 300, jitter: false })
    assert.deepEqual(
      [1, 2, 3, 4].map((retry) => backoffDelayMs(policy, retry)),
      [100, 200, 300, 300]
    )
    const jittered = { ...policy, jitter: true }
    assert.equal(
      backoffDelayMs(jittered, 2, () => 0),
      100
    )
    assert.equal(
      backoffDelayMs(jittered, 2, () => 1),
      200
    )
  })

  test('Retry-After: seconds or an HTTP date', ({ assert }) => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    assert.equal(parseRetryAfter('5'), 5)
    assert.equal(parseRetryAfter(['7']), 7)
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30)
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0)
    assert.isUndefined(parseRetryAfter(undefined))
    assert.isUndefined(parseRetryAfter('soon'))
  })
})

test.group('merchant client: errors and signatures', () => {
  test('network failures are classified from Node error codes', ({ assert }) => {
    const error = (code: string, message = 'x') => Object.assign(new Error(message), { code })
    assert.equal(classifyNetworkError(error('ECONNRESET', 'socket hang up')), 'socket-hang-up')
    assert.equal(classifyNetworkError(error('ECONNRESET', 'read ECONNRESET')), 'connection-reset')
    assert.equal(classifyNetworkError(error('EPIPE')), 'connection-reset')
    assert.equal(classifyNetworkError(error('ECONNREFUSED')), 'connection-refused')
    assert.equal(classifyNetworkError(error('ETIMEDOUT')), 'timeout')
    assert.equal(classifyNetworkError(error('ENOTFOUND')), 'dns')
    assert.equal(classifyNetworkError(error('DEPTH_ZERO_SELF_SIGNED_CERT')), 'tls')
    assert.equal(classifyNetworkError(error('ERR_TLS_CERT_ALTNAME_INVALID')), 'tls')
    assert.equal(classifyNetworkError(error('CERT_HAS_EXPIRED')), 'tls')
    assert.equal(classifyNetworkError(new Error('no code')), 'other')
  })

  test('error classes carry what callers branch on', ({ assert }) => {
    const api = new GatewayApiError({
      endpoint: '/payment/create',
      attempts: 1,
      status: 500,
      code: 500,
      error: 'internal-server-error',
      message: 'internal server error',
    })
    assert.isFalse(api.listed, 'an identifier the spec does not list is kept as sent')
    assert.equal(api.error, 'internal-server-error')
    assert.isTrue(isApiErrorIdentifier('channel-limit-reached'))
    assert.isFalse(isApiErrorIdentifier('internal-server-error'))
    const network = new GatewayNetworkError({
      endpoint: '/balance',
      attempts: 3,
      failure: 'timeout',
      message: 'no answer',
    })
    assert.isTrue(network.mayHaveReachedGateway)
    assert.equal(network.name, 'GatewayNetworkError')
  })

  test('signBody is the lowercase hex HMAC of the bytes; verifyCallback checks it', ({
    assert,
  }) => {
    const body = Buffer.from('{"merchant_id":"TEST0001","amount":100.00}')
    // printf '%s' '{"merchant_id":"TEST0001","amount":100.00}' | openssl dgst -sha256 -hmac secret
    const signature = signBody('secret', body)
    assert.equal(signature, '910281005b6e18769f821780f77822060e682bf448a591b9a027c3a48471cfa9')
    assert.equal(signature, signBody('secret', body.toString('utf8')))
    assert.isTrue(verifyCallback(body, signature, 'secret'))
    assert.isFalse(verifyCallback(body, signature, 'other'))
    assert.isFalse(verifyCallback(Buffer.concat([body, Buffer.from(' ')]), signature, 'secret'))
  })

  test('orderKind reads the marker at index 3', ({ assert }) => {
    assert.equal(orderKind('ABCP20260101ABCDEFGHJKLM'), 'payment')
    assert.equal(orderKind('PPPW20260101ABCDEFGHJKLM'), 'withdraw')
    assert.equal(orderKind('WWWM20260101ABCDEFGHJKLM'), 'settlement')
    assert.isNull(orderKind('ABCX20260101ABCDEFGHJKLM'))
    assert.isNull(orderKind('ABCP'))
  })
})
