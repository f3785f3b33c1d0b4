import { test } from '@japa/runner'
import { rawRequest } from '#tests/helpers/http'
import { createOperator } from '#tests/helpers/admin'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'
import { startSecondGateway, type SecondGateway } from '#tests/helpers/second_process'

/**
 * Security headers of the HTML areas and what the request log writes about
 * one-time links. The signed-in back-office pages are checked in Chromium
 * (tests/browser/admin_security_headers.spec.ts): signing in needs a TOTP.
 */

function header(
  response: { headers: Record<string, string | string[] | undefined> },
  name: string
) {
  const value = response.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(', ') : (value ?? '')
}

async function createPaymentPage() {
  const who = await createDepositMerchant()
  await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: 'CSP1',
      amount: '250.50',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(`payment create: ${response.text}`)
  return response.json.data.uuid as string
}

test.group('security headers: hosted payment page', (group) => {
  group.each.setup(() => resetDatabase())

  test('the payment page sends a nonce-based CSP that its own script and style carry', async ({
    assert,
  }) => {
    const uuid = await createPaymentPage()
    const first = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.equal(first.status, 200)
    const csp = header(first, 'content-security-policy')
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1]
    assert.exists(nonce, `a script nonce in ${JSON.stringify(csp)}`)
    assert.include(csp, `default-src 'none'`)
    assert.include(csp, `style-src 'nonce-${nonce}'`)
    assert.include(csp, `img-src 'self' data:`)
    assert.include(csp, `connect-src 'self'`)
    assert.include(csp, `form-action 'self'`)
    assert.include(csp, `frame-ancestors 'none'`)
    assert.notInclude(csp, 'unsafe-inline')

    // Every inline script and stylesheet carries this response's nonce; no style attributes.
    const scripts = [...first.text.matchAll(/<script([^>]*)>/g)].map((match) => match[1])
    const styles = [...first.text.matchAll(/<style([^>]*)>/g)].map((match) => match[1])
    assert.isAbove(scripts.length, 0)
    assert.isAbove(styles.length, 0)
    for (const attributes of [...scripts, ...styles]) {
      assert.include(attributes, `nonce="${nonce}"`)
    }
    assert.notMatch(first.text, /\sstyle="/)

    // A fresh nonce per response.
    const second = await rawRequest(`/pay/${uuid}`, { method: 'GET' })
    assert.notInclude(header(second, 'content-security-policy'), `'nonce-${nonce}'`)
  })

  test('the payment page not-found answer has the same CSP', async ({ assert }) => {
    const response = await rawRequest('/pay/00000000-0000-4000-8000-000000000000', {
      method: 'GET',
    })
    assert.equal(response.status, 404)
    const csp = header(response, 'content-security-policy')
    const nonce = /style-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1]
    assert.exists(nonce)
    assert.include(response.text, `<style nonce="${nonce}">`)
  })
})

test.group('security headers: back-office without a session', (group) => {
  group.each.setup(() => resetDatabase())

  test('login, enrolment link and the redirect of a signed-out page are no-store', async ({
    assert,
  }) => {
    const link = new URL(await createOperator('nostore@example.test', 'viewer'))
    for (const path of ['/admin/login', link.pathname, '/admin/', '/admin/orders']) {
      const response = await rawRequest(path, { method: 'GET' })
      assert.include([200, 302], response.status, path)
      assert.include(header(response, 'cache-control'), 'no-store', path)
    }
  })
})

test.group('request log: one-time links', (group) => {
  let gateway: SecondGateway
  group.setup(async () => {
    gateway = await startSecondGateway({ env: { LOG_LEVEL: 'info' } })
    return () => gateway.stop()
  })
  group.each.setup(() => resetDatabase())

  test('an enrolment link /admin/welcome/<token> is logged with [redacted]', async ({ assert }) => {
    const link = new URL(await createOperator('redact@example.test', 'viewer'))
    const token = link.pathname.split('/').pop()!
    assert.isAbove(token.length, 10)
    const requestIds: string[] = []
    // The page, its form (refused: no CSRF token) and a method no route has.
    for (const method of ['GET', 'POST', 'PUT']) {
      const response = await rawRequest(link.pathname, {
        method,
        baseUrl: gateway.url,
        ...(method === 'GET'
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: '{}' }),
      })
      requestIds.push(String(response.headers['x-request-id']))
    }
    await new Promise((resolve) => setTimeout(resolve, 300))

    const output = gateway.output()
    const leaks = output.split('\n').filter((line) => line.includes(token))
    assert.deepEqual(leaks, [], 'no log line carries the token')
    const lines = output
      .split('\n')
      .filter((line) => requestIds.some((id) => line.includes(id)))
      .map((line) => JSON.parse(line))
    const completed = lines.filter((line) => line.msg === 'request completed')
    assert.lengthOf(completed, 3, JSON.stringify(lines))
    for (const line of completed) assert.equal(line.url, '/admin/welcome/[redacted]')
  })
})
