import { test } from '@japa/runner'
import fc from 'fast-check'
import { signBody } from '#merchants/credentials'
import { epochSeconds } from '#core/clock'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import { SQL, STACK_OR_PATH } from '#tests/helpers/leaks'
import {
  PAYOUT_FIELDS,
  authBody,
  createDepositAccount,
  createDepositMerchant,
  creditMerchant,
  resetDatabase,
  signedPost,
  withMarker,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'

/**
 * Thousands of generated bad inputs over every endpoint, from a fixed seed
 * (fast-check: same cases on every run, and a failing case is shrunk to a
 * small one). Whatever is sent, the gateway answers below 500, in the spec's
 * envelope (or a success), and never with a stack trace, a path or SQL.
 */
const SEED = 20_261_122
const BATCHES = 400
const IN_FLIGHT = 8

const ENDPOINTS = [
  '/balance',
  '/payment/create',
  '/payment/create-transfer',
  '/payment/create-flex',
  '/payment/query',
  '/withdraw/create',
  '/withdraw/query',
  '/thb-settlement/create',
  '/thb-settlement/query',
  '/slip/upload',
] as const
type Endpoint = (typeof ENDPOINTS)[number]

/** The corpus plays its own client address, so its failed signatures count against no one else. */
const CLIENT_ADDRESS = '127.0.0.77'

interface Case {
  [fc.toStringMethod]?: () => string
  label: string
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Buffer
  /** Strings the request carried: an answer may echo them back. */
  sent: string[]
}

// ---------------------------------------------------------------- values

const SQLISH = [
  "' OR '1'='1",
  '1; DROP TABLE merchants; --',
  '" OR 1=1 --',
  "%' UNION SELECT secret FROM merchant_credentials --",
  "'; SELECT SLEEP(5); --",
  '\\',
  "1' AND extractvalue(1,concat(0x7e,version())) --",
]
const HTMLISH = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '{{ 7*7 }}',
  '@{{ x }}',
  '${7*7}',
  '</textarea><svg onload=alert(1)>',
]
const NUMBERISH = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e3',
  '1E+2',
  '1e-2',
  '0x10',
  '1_000',
  '١٢٣.٠٠',
  '๑๐๐.๐๐',
  ' 100.00 ',
  '100.001',
  '100.',
  '.5',
  '-100.00',
  '+100',
  '00100.00',
  '9'.repeat(40),
  '100,00',
  '',
]

const junkScalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(), // NaN and ±Infinity serialise as null
  fc.constantFrom(1e21, 1e308, -0, 2 ** 53 + 1, -1, 0, 100.001, -50, 19.99, 1e-7),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }), // lone surrogates included
  fc.constantFrom(...SQLISH, ...HTMLISH, ...NUMBERISH),
  fc.integer({ min: 1000, max: 50_000 }).map((length) => 'x'.repeat(length))
)

const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: junkScalar },
  { weight: 1, arbitrary: fc.array(junkScalar, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), junkScalar) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 10, max: 2000 })
      .map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }
)

/** Valid-looking values, so that many requests get past validation and create orders. */
function validFields(endpoint: Endpoint, ids: Record<string, string>) {
  const orderId = fc.stringMatching(/^[A-Za-z0-9]{1,40}$/)
  const order = fc.record({
    merchant_order_id: orderId,
    amount: fc.oneof(
      fc.integer({ min: 2000, max: 500_000 }).map((satang) => (satang / 100).toFixed(2)),
      fc.integer({ min: 20, max: 5000 })
    ),
    bank: fc.constantFrom('KBANK', 'SCB', 'BBL', 'KTB', 'BAY', 'TTB'),
    account_name: fc.constantFrom('Somchai Jaidee', 'สมชาย ใจดี', 'A'),
    account_no: fc.stringMatching(/^[0-9]{10,15}$/),
    notify_url: fc.constantFrom('https://merchant.example.test/callback', undefined),
  })
  switch (endpoint) {
    case '/balance':
      return fc.constant({})
    case '/payment/query':
      return fc.record({ platform_order_id: fc.constantFrom(ids.payment, ...Object.values(ids)) })
    case '/withdraw/query':
      return fc.record({ platform_order_id: fc.constantFrom(ids.withdraw, ...Object.values(ids)) })
    case '/thb-settlement/query':
      return fc.record({
        platform_order_id: fc.constantFrom(ids.settlement, ...Object.values(ids)),
      })
    case '/slip/upload':
      return fc.record({
        platform_order_id: fc.constantFrom(ids.payment),
        image_base64: fc.base64String({ maxLength: 400 }),
      })
    default:
      return order
  }
}

/** Field-level mutations the validators and actions must refuse cleanly. */
const targetedJunk: Record<string, fc.Arbitrary<unknown>> = {
  merchant_order_id: fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9]{41,300}$/),
    fc.constantFrom('', ' ', 'ORDER-1', 'ORDER 1', 'ÖRDER1', 'A'.repeat(41))
  ),
  amount: fc.oneof(
    fc.constantFrom(...NUMBERISH),
    fc.constantFrom(-100, 0, 19.99, 1e21, 100.005, 2 ** 63, '1e2', '20.00.00')
  ),
  bank: fc.constantFrom('XXX', 'kbank', 'KBANK ', '', '004', 'SCB\u0000', 'TOSTRING', '__proto__'),
  account_no: fc.constantFrom(
    '',
    '123',
    '1'.repeat(16),
    'abcdefghij',
    '12-34',
    12345678901234567890,
    -1234567890,
    1.5e10,
    '١٢٣٤٥٦٧٨٩٠'
  ),
  platform_order_id: fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', 'P'.repeat(500), '../../etc/passwd', '%00', '0'.repeat(24))
  ),
  notify_url: fc.constantFrom(
    'http://merchant.example.test/cb',
    'https://user:pass@merchant.example.test/cb',
    'javascript:alert(1)',
    'https://',
    'https://' + 'a'.repeat(3000) + '.test/',
    'ftp://x'
  ),
}

/** A valid body for the endpoint with some fields replaced, dropped or added. */
function mutatedFields(endpoint: Endpoint, ids: Record<string, string>) {
  return fc
    .tuple(
      validFields(endpoint, ids),
      fc.array(
        fc.tuple(
          fc.constantFrom(
            'merchant_order_id',
            'amount',
            'bank',
            'account_name',
            'account_no',
            'notify_url',
            'platform_order_id',
            'image_base64',
            '__proto__',
            'constructor',
            'extra'
          ),
          fc.oneof(
            { weight: 3, arbitrary: junkValue },
            { weight: 3, arbitrary: fc.constant('targeted') },
            { weight: 1, arbitrary: fc.constant('drop') }
          )
        ),
        { maxLength: 3 }
      ),
      fc.record({
        merchant_order_id: targetedJunk.merchant_order_id,
        amount: targetedJunk.amount,
        bank: targetedJunk.bank,
        account_no: targetedJunk.account_no,
        platform_order_id: targetedJunk.platform_order_id,
        notify_url: targetedJunk.notify_url,
      })
    )
    .map(([valid, changes, targeted]) => {
      const fields: Record<string, unknown> = { ...valid }
      for (const [field, change] of changes) {
        if (change === 'drop') delete fields[field]
        else if (change === 'targeted') {
          fields[field] = (targeted as Record<string, unknown>)[field] ?? 'x'
        } else fields[field] = change
      }
      return fields
    })
}

// ---------------------------------------------------------------- requests

function collectStrings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value)
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.push(key)
      collectStrings(inner, into)
    }
  }
  return into
}

/** Every UTF-8 byte as %XX (lone surrogates become U+FFFD, as a browser would send them). */
function percentEncoded(text: string) {
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')
}

function decodeURIComponentSafe(text: string) {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function jsonHeaders(body: string | Buffer, secret?: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (secret) headers['x-signature'] = signBody(secret, body)
  return headers
}

/** How fast-check prints a case in a counterexample: one line, long bodies cut. */
function printable(request: Omit<Case, typeof fc.toStringMethod>): Case {
  return { ...request, [fc.toStringMethod]: () => describeCase(request) }
}

function signedCase(who: TestMerchant, endpoint: Endpoint, fields: Record<string, unknown>): Case {
  const body = authBody(who, fields)
  return {
    label: 'signed fields',
    method: 'POST',
    path: endpoint,
    headers: jsonHeaders(body, who.secret),
    body,
    sent: collectStrings(fields),
  }
}

function cases(who: TestMerchant, ids: Record<string, string>): fc.Arbitrary<Case> {
  const endpoint = fc.constantFrom(...ENDPOINTS)
  // One arbitrary per endpoint, built once: building them for each case is slow.
  const signed = fc.oneof(
    ...ENDPOINTS.map((path) =>
      mutatedFields(path, ids).map((fields) => signedCase(who, path, fields))
    )
  )

  const badAuth = fc
    .tuple(
      endpoint,
      fc.record({
        merchant_id: fc.oneof(fc.constant(who.merchantId), junkValue),
        token: fc.oneof(fc.constant(who.token), junkValue),
        time: fc.oneof(
          fc.constant(epochSeconds()),
          fc.constant(String(epochSeconds())),
          fc.constantFrom(0, -1, epochSeconds() + 10_000, 1e12, '1e9', 'now'),
          junkValue
        ),
      }),
      fc.constantFrom('right', 'none', 'random', 'other-secret', 'empty', 'uppercase')
    )
    .map(([path, auth, signing]): Case => {
      const body = JSON.stringify({ ...auth, ...PAYOUT_FIELDS })
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      const right = signBody(who.secret, body)
      if (signing === 'right') headers['x-signature'] = right
      if (signing === 'random') headers['x-signature'] = 'f'.repeat(64)
      if (signing === 'other-secret') headers['x-signature'] = signBody('not the secret', body)
      if (signing === 'empty') headers['x-signature'] = ''
      if (signing === 'uppercase') headers['x-signature'] = right.toUpperCase()
      return {
        label: `auth ${signing}`,
        method: 'POST',
        path,
        headers,
        body,
        sent: collectStrings(auth),
      }
    })

  const contentTypes = fc
    .tuple(
      endpoint,
      fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/jsonx',
        'application/json, text/plain',
        '',
        'APPLICATION/JSON'
      )
    )
    .map(([path, type]): Case => {
      const body = authBody(who, PAYOUT_FIELDS)
      const headers = jsonHeaders(body, who.secret)
      if (type === '') delete headers['content-type']
      else headers['content-type'] = type
      return { label: 'content type', method: 'POST', path, headers, body, sent: [] }
    })

  const brokenJson = fc
    .tuple(
      endpoint,
      fc.oneof(
        fc
          .tuple(fc.nat(), fc.constant(authBody(who, PAYOUT_FIELDS)))
          .map(([cut, body]) => body.slice(0, cut % body.length)),
        fc.constantFrom(
          '',
          'null',
          '[]',
          '"a string"',
          '123',
          'NaN',
          '{"amount": NaN}',
          "{'single': 'quotes'}",
          '{"a":1,}',
          '\uFEFF{"a":1}',
          '{"a":1} trailing',
          '{"a":"\\ud800"}',
          '{"__proto__":{"polluted":true}}',
          authBody(who, { amount: '1' }).replace('{', '{"amount":"2",')
        ),
        fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
        fc
          .integer({ min: 1000, max: 50_000 })
          .map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
        fc
          .integer({ min: 1000, max: 100_000 })
          .map((depth) => `{"merchant_id":"${who.merchantId}","amount":${'['.repeat(depth)}`),
        fc
          .integer({ min: 1000, max: 50_000 })
          .map((depth) =>
            authBody(who, { merchant_order_id: 'DEEP1' }).replace(
              /}$/,
              `,"amount":${'['.repeat(depth)}${']'.repeat(depth)}}`
            )
          )
      ),
      fc.boolean()
    )
    .map(([path, body, sign]): Case => ({
      label: 'broken or deep JSON',
      method: 'POST',
      path,
      headers: jsonHeaders(body, sign ? who.secret : undefined),
      body,
      sent: [],
    }))

  const otherMethods = fc
    .tuple(endpoint, fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'QUERY'))
    .map(([path, method]): Case => ({ label: 'method', method, path, headers: {}, sent: [] }))

  const paymentPage = fc
    .tuple(
      fc.oneof(
        fc
          .oneof(
            fc.string({ maxLength: 60 }),
            fc.string({ unit: 'binary', maxLength: 20 }),
            fc.uuid(),
            fc.constantFrom(...SQLISH, ...HTMLISH, '..', 'a/b/c')
          )
          .map(percentEncoded),
        // Sent as is: percent-encoding that is not UTF-8.
        fc.constantFrom('%', '%E0%A4%A', '%C0%80', '%ZZ', '%00')
      ),
      fc.constantFrom('', '/status', '?lang=en', '?lang=<script>', '?lang[]=x')
    )
    .map(([segment, suffix]): Case => ({
      label: 'payment page',
      method: 'GET',
      path: `/pay/${segment}${suffix}`,
      headers: { accept: 'text/html' },
      sent: [decodeURIComponentSafe(segment)],
    }))

  return fc
    .oneof(
      { weight: 10, arbitrary: signed },
      { weight: 3, arbitrary: badAuth },
      { weight: 1, arbitrary: contentTypes },
      { weight: 2, arbitrary: brokenJson },
      { weight: 1, arbitrary: otherMethods },
      { weight: 2, arbitrary: paymentPage }
    )
    .map(printable)
}

// ---------------------------------------------------------------- answers

const IDENTIFIER = /^[a-z]+(-[a-z]+)*$/

/** Removes what the request itself carried, so that an echoed input is not taken for a leak. */
function withoutEchoes(text: string, sent: string[]) {
  let rest = text
  for (const value of sent.filter((item) => item.length >= 3).sort((a, b) => b.length - a.length)) {
    rest = rest.split(value).join('').split(JSON.stringify(value).slice(1, -1)).join('')
  }
  return rest
}

/** Why the answer breaks the contract, or null when it keeps it. */
function violation(request: Case, response: RawResponse): string | null {
  if (response.status >= 500) return `status ${response.status}`
  for (const leak of STACK_OR_PATH) if (leak.test(response.text)) return `leak ${leak}`
  if (SQL.test(withoutEchoes(response.text, request.sent))) return 'SQL in the answer'

  if (request.path.startsWith('/pay/')) {
    if (response.text.includes('An error has occurred')) return 'developer error page'
    return null
  }
  if (request.method === 'HEAD') return null

  if (!/^application\/json/.test(String(response.headers['content-type']))) {
    return `content type ${response.headers['content-type']}`
  }
  const json = response.json
  if (!json || typeof json !== 'object') return 'body is not JSON'
  if (response.status === 200) {
    const keys = Object.keys(json).join(',')
    if (keys !== 'code,message,data,success' || json.code !== 200 || json.success !== true) {
      return 'not the success envelope'
    }
    return null
  }
  const keys = Object.keys(json)
    .filter((key) => key !== 'data')
    .join(',')
  if (keys !== 'code,error,success,message') return `envelope keys ${keys}`
  if (json.code !== response.status) return 'code does not mirror the status'
  if (json.success !== false) return 'success is not false'
  if (typeof json.error !== 'string' || !IDENTIFIER.test(json.error)) return 'error identifier'
  if (typeof json.message !== 'string' || json.message.length === 0) return 'message'
  return null
}

function describeCase(request: Omit<Case, typeof fc.toStringMethod>) {
  const body = request.body === undefined ? '' : String(request.body)
  return `${request.label}: ${request.method} ${request.path} ${JSON.stringify(request.headers)} ${
    body.length > 300 ? `${body.slice(0, 300)}… (${body.length} bytes)` : body
  }`
}

test.group('bad input corpus', (group) => {
  let gateway: SecondGateway
  group.setup(async () => {
    // Rate limits high enough for a few thousand requests from one client in 30 s.
    gateway = await startSecondGateway({
      env: {
        API_RATE_LIMIT_PER_MERCHANT: '1000000',
        API_RATE_LIMIT_PER_IP: '1000000',
        API_AUTH_FAILURES_PER_IP: '1000000',
      },
    })
    return () => gateway.stop()
  })
  group.each.setup(() => resetDatabase())

  test('every endpoint: below 500, in the envelope, nothing leaked', async ({ assert }) => {
    const who = await createDepositMerchant({ payoutRoute: 'sandbox' })
    await creditMerchant(who.merchant, 'available', 1_000_000_000)
    for (const channel of ['qr', 'transfer', 'external'] as const) {
      await createDepositAccount({ channel, maxAmount: null })
    }
    const send = (request: Case) =>
      rawRequest(request.path, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        baseUrl: gateway.url,
        localAddress: CLIENT_ADDRESS,
      })

    // Real orders to query (and their near misses through the generators).
    const created = await signedPost(
      '/payment/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'CORPUS1' }),
      { baseUrl: gateway.url, localAddress: CLIENT_ADDRESS }
    )
    const withdraw = await signedPost(
      '/withdraw/create',
      who,
      authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: 'CORPUS2' }),
      { baseUrl: gateway.url, localAddress: CLIENT_ADDRESS }
    )
    assert.equal(created.status, 200, created.text)
    assert.equal(withdraw.status, 200, withdraw.text)
    const payment = created.json.data.platform_order_id
    const ids = {
      payment,
      withdraw: withdraw.json.data.platform_order_id,
      settlement: withMarker(payment, 'M'),
      lowercase: payment.toLowerCase(),
    }

    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(
        fc.array(cases(who, ids), { minLength: IN_FLIGHT, maxLength: IN_FLIGHT }),
        async (batch) => {
          const responses = await Promise.all(batch.map(send))
          responses.forEach((response, index) => {
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
            const problem = violation(batch[index], response)
            if (problem) {
              throw new Error(
                `${problem}\n  request: ${describeCase(batch[index])}\n  answer: ${response.status} ${response.text.slice(0, 500)}`
              )
            }
          })
        }
      ),
      { seed: SEED, numRuns: BATCHES, endOnFailure: true }
    )

    // The corpus must reach the actions, not only the front door.
    const total = [...statuses.values()].reduce((sum, count) => sum + count, 0)
    console.log(`bad input corpus: ${total} answers by status`, Object.fromEntries(statuses))
    assert.isAtLeast(total, BATCHES * IN_FLIGHT)
    assert.isAbove(statuses.get(200) ?? 0, 100)
    assert.isAbove(statuses.get(400) ?? 0, 100)
    assert.isAbove(statuses.get(403) ?? 0, 100)
  }).timeout(120_000)
})
