import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

/**
 * Every answer under /pay/ carries the payment page's nonce-based CSP and
 * Cache-Control: no-store (docs/decisions.md, "The hosted payment page has
 * its own nonce-based CSP"): the page in each of its states, its 404s (an
 * unknown token from the controller, an unknown route from the exception
 * handler), a crash (500), the status poll, and the slip form's answers
 * including the per-IP limit.
 */

const POLICY_WITHOUT_NONCE = [
  `default-src 'none'`,
  `img-src 'self' data:`,
  `connect-src 'self'`,
  `form-action 'self'`,
  `frame-ancestors 'none'`,
  `base-uri 'none'`,
  `object-src 'none'`,
]

function header(response: RawResponse, name: string) {
  const value = response.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(', ') : (value ?? '')
}

/**
 * Asserts the headers, and that every inline style and script of an HTML
 * answer carries this answer's nonce (so the page still looks right under
 * its policy). Returns the nonce.
 */
function assertPageHeaders(assert: Assert, response: RawResponse, label: string) {
  const csp = header(response, 'content-security-policy')
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]{24})'/.exec(csp)?.[1]
  assert.exists(nonce, `${label}: a nonce in ${JSON.stringify(csp)}`)
  assert.include(csp, `style-src 'nonce-${nonce}'`, label)
  for (const directive of POLICY_WITHOUT_NONCE) assert.include(csp, directive, label)
  assert.notInclude(csp, 'unsafe-inline', label)
  assert.equal(header(response, 'cache-control'), 'no-store', label)
  assert.equal(header(response, 'referrer-policy'), 'no-referrer', label)
  assert.equal(header(response, 'x-frame-options'), 'DENY', label)
  if (/^text\/html/.test(header(response, 'content-type'))) {
    const tags = [...response.text.matchAll(/<(?:script|style)([^>]*)>/g)].map((m) => m[1])
    assert.isAbove(tags.length, 0, `${label}: the page has its stylesheet`)
    for (const attributes of tags) assert.include(attributes, `nonce="${nonce}"`, label)
  }
  return nonce!
}

async function openOrder() {
  const who = await createDepositMerchant()
  await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `HDR${randomBytes(4).toString('hex')}`,
      amount: '1250.50',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(`payment create: ${response.text}`)
  return response.json.data.uuid as string
}

/** A multipart slip form as the page's form sends it, from `localAddress`. */
function postSlip(uuid: string, bytes: Buffer | null, localAddress: string) {
  const boundary = `----h${randomBytes(6).toString('hex')}`
  const parts: Buffer[] = []
  if (bytes) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="slip"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`
      ),
      bytes,
      Buffer.from('\r\n')
    )
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return rawRequest(`/pay/${uuid}/slip?lang=en`, {
    body: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    localAddress,
  })
}

/** A loopback address of its own, so the per-IP slip limit of other tests is not shared. */
function loopback() {
  return `127.0.${1 + Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`
}

test.group('payment page: CSP and Cache-Control on every answer', (group) => {
  group.each.setup(() => resetDatabase())

  test('the page to pay, paid, expired and under review', async ({ assert }) => {
    const uuid = await openOrder()
    const open = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.equal(open.status, 200)
    assert.include(open.text, 'data-state="pay"')
    // Amounts as customers read them; the bank by its name.
    assert.include(open.text, '1,250.50')
    assert.include(open.text, 'ธนาคารกสิกรไทย')
    const nonce = assertPageHeaders(assert, open, 'open')
    const again = await rawRequest(`/pay/${uuid}?lang=en`, { method: 'GET' })
    assert.notEqual(assertPageHeaders(assert, again, 'open, English'), nonce, 'a fresh nonce')
    assert.include(again.text, 'Kasikornbank')

    await db.from('payment_orders').where('uuid', uuid).update({ awaiting_review: true })
    const review = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.include(review.text, 'data-state="review"')
    assertPageHeaders(assert, review, 'review')

    await db
      .from('payment_orders')
      .where('uuid', uuid)
      .update({ awaiting_review: false, expire_at: new Date(Date.now() - 60_000) })
    const expired = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.equal(expired.status, 200)
    assert.include(expired.text, 'data-state="expired"')
    assert.include(expired.text, 'รายการนี้หมดอายุแล้ว')
    assertPageHeaders(assert, expired, 'expired')

    await db.from('payment_orders').where('uuid', uuid).update({ status: 'unsettled_paid' })
    const paid = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.include(paid.text, 'data-state="paid"')
    assertPageHeaders(assert, paid, 'paid')
  })

  test('404 and 405: an unknown token, a malformed one, an unknown path, another method', async ({
    assert,
  }) => {
    const cases: Array<[string, string, number]> = [
      ['/pay/0190f5e2-8a3b-7c4d-9e5f-0123456789ab', 'GET', 404],
      ['/pay/not-a-uuid', 'GET', 404],
      ['/pay/0190f5e2-8a3b-7c4d-9e5f-0123456789ab/nothing', 'GET', 404],
      ['/pay/', 'GET', 404],
      ['/pay/0190f5e2-8a3b-7c4d-9e5f-0123456789ab', 'POST', 404],
      // The slip form's path exists for POST only.
      ['/pay/0190f5e2-8a3b-7c4d-9e5f-0123456789ab/slip', 'GET', 405],
    ]
    for (const [path, method, status] of cases) {
      const response = await rawRequest(path, {
        method,
        body: method === 'POST' ? '{}' : undefined,
        headers: { accept: 'text/html' },
      })
      assert.equal(response.status, status, `${method} ${path}`)
      assert.match(header(response, 'content-type'), /^text\/html/, `${method} ${path}`)
      assertPageHeaders(assert, response, `${method} ${path}`)
    }
    // The slip form of an unknown order: the payment page's own not-found page.
    const slip = await postSlip('0190f5e2-8a3b-7c4d-9e5f-0123456789ab', null, loopback())
    assert.equal(slip.status, 404)
    assert.include(slip.text, 'Payment not found')
    assertPageHeaders(assert, slip, 'slip form, unknown order')
  })

  test('500: a page that crashes renders the plain error page under the same policy', async ({
    assert,
  }) => {
    const uuid = await openOrder()
    // A stored QR payload too long to draw: the page fails for real.
    await db
      .from('payment_orders')
      .where('uuid', uuid)
      .update({ qrcode: 'x'.repeat(8000) })
    const response = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.equal(response.status, 500)
    assert.include(response.text, 'เกิดข้อผิดพลาด')
    assert.include(response.text, 'Something went wrong')
    assertPageHeaders(assert, response, '500')
  })

  test('the status poll, found and not found', async ({ assert }) => {
    const uuid = await openOrder()
    const found = await rawRequest(`/pay/${uuid}/status`, { method: 'GET' })
    assert.equal(found.status, 200)
    assertPageHeaders(assert, found, 'status')
    const missing = await rawRequest('/pay/0190f5e2-8a3b-7c4d-9e5f-0123456789ab/status', {
      method: 'GET',
    })
    assert.equal(missing.status, 404)
    assertPageHeaders(assert, missing, 'status, not found')
  })

  test('the slip form: refused, and over the per-IP limit (Retry-After), then the page it lands on', async ({
    assert,
  }) => {
    const uuid = await openOrder()
    const from = loopback()
    // No file: refused back to the page with its message.
    const refused = await postSlip(uuid, null, from)
    assert.equal(refused.status, 303)
    assert.match(header(refused, 'location'), /slip=missing/)
    assertPageHeaders(assert, refused, 'slip refused')

    // 10 requests a minute per address: the 11th is over the limit.
    let limited: RawResponse | undefined
    for (let n = 0; n < 12 && !limited; n++) {
      const response = await postSlip(uuid, null, from)
      if (/slip=rate-limited/.test(header(response, 'location'))) limited = response
    }
    assert.exists(limited, 'the per-IP limit answered')
    assert.equal(limited!.status, 303)
    assert.isAbove(Number(header(limited!, 'retry-after')), 0)
    assertPageHeaders(assert, limited!, 'slip rate limited')

    const location = new URL(header(limited!, 'location'), 'https://gateway.test')
    const landing = await rawRequest(location.pathname + location.search, { method: 'GET' })
    assert.equal(landing.status, 200)
    assert.include(landing.text, 'Too many attempts. Please try again in a minute.')
    assertPageHeaders(assert, landing, 'page after the limit')
  })
})
