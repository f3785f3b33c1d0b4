import { test } from '@japa/runner'
import type { BrowserContext, Page, Response } from 'playwright-core'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import PaymentOrder from '#payments/models/payment_order'
import { uploadSlip } from '#slips/actions/upload_slip'
import { testServers } from '#tests/helpers/servers'
import { closeBrowser, newContext, PHONE } from '#tests/helpers/browser'
import { sandboxSlip } from '#tests/helpers/slips'
import { receiveLine } from '#tests/helpers/lines'
import { adminUrl, createOperator, enrolThroughLink, LAPTOP } from '#tests/helpers/admin'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * Security headers in headless Chromium against the real HTTPS server:
 * every signed-in back-office page and export is no-store, and the hosted
 * payment page runs under a nonce-based Content-Security-Policy without a
 * single violation (its QR, countdown and slip form still work).
 */

async function createPayment(who: TestMerchant, merchantOrderId: string) {
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: merchantOrderId,
      amount: '250.50',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(`payment create: ${response.text}`)
  return response.json.data as { platform_order_id: string; uuid: string; payment_url: string }
}

/**
 * Polls an expression in the page from here: page.waitForFunction would
 * evaluate a string with eval() inside the page, which the CSP refuses.
 */
async function pageUntil(page: Page, expression: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${expression}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function cacheControl(response: Response | null | undefined) {
  return response?.headers()['cache-control'] ?? ''
}

test.group('security headers (browser)', (group) => {
  let context: BrowserContext | undefined

  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await context?.close()
    context = undefined
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('every signed-in back-office page and export is Cache-Control: no-store', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
    const data = await createPayment(who, 'NOSTORE1')
    const order = await PaymentOrder.findByOrFail('platform_order_id', data.platform_order_id)
    const image = await sandboxSlip({
      amount: order.transferAmount,
      receiverAccountNo: account.accountNo,
      receiverName: account.accountName,
    })
    const { slip } = await uploadSlip({
      order,
      image,
      source: 'payment_page',
      actor: { name: 'customer' },
    })
    const line = await receiveLine(account.id, { amount: 999_99 })
    const merchant = await Merchant.findOrFail(who.merchant.id)
    const platform = await Platform.findOrFail(who.merchant.platformId)

    // Enrolment in the browser, recording what each page answered (recovery codes included).
    const link = await createOperator('headers@example.com', 'admin')
    context = await newContext(LAPTOP)
    const page = await context.newPage()
    const seen = new Map<string, string>()
    page.on('response', (response) => {
      const url = new URL(response.url())
      if (url.pathname.startsWith('/admin')) seen.set(url.pathname, cacheControl(response))
    })
    await enrolThroughLink(page, link)
    assert.include(seen.get('/admin/recovery-codes') ?? '', 'no-store', '/admin/recovery-codes')
    assert.include(seen.get('/admin/enrol') ?? '', 'no-store', '/admin/enrol')

    const paths = [
      '/',
      '/account',
      '/audit',
      '/audit.csv',
      '/operators',
      '/platforms',
      `/platforms/${platform.code}`,
      '/merchants',
      `/merchants/${merchant.merchantId}`,
      '/deposit-accounts',
      `/deposit-accounts/${account.id}`,
      '/orders',
      '/orders.csv',
      `/orders/${data.platform_order_id}`,
      `/slips/${slip.id}/image`,
      '/review/slips',
      `/review/slips/${slip.id}`,
      '/review/lines',
      `/review/lines/${line.id}`,
      '/review/receivables',
      '/reconciliation',
      '/payouts',
      '/api-blocks',
    ]
    for (const path of paths) {
      const response = await page.request.get(adminUrl(path), { maxRedirects: 0 })
      assert.equal(response.status(), 200, path)
      assert.include(response.headers()['cache-control'] ?? '', 'no-store', path)
    }

    // The exports really are exports, and a page opened in the tab is no-store too.
    const csv = await page.request.get(adminUrl('/orders.csv'))
    assert.include(csv.headers()['content-type'], 'text/csv')
    const opened = await page.goto(adminUrl(`/orders/${data.platform_order_id}`))
    assert.include(cacheControl(opened), 'no-store')
    // The shared admin stylesheet stays cacheable (outside the signed-in stack).
    const css = await page.request.get(adminUrl('/assets/admin.css'))
    assert.notInclude(css.headers()['cache-control'] ?? '', 'no-store')
  })

  test('the payment page runs under a nonce CSP: styles, QR and countdown work, no violation', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const platform = await Platform.findOrFail(who.merchant.platformId)
    platform.paymentPageDomain = new URL(testServers.httpsUrl).host
    await platform.save()
    await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
    const data = await createPayment(who, 'CSP1')

    context = await newContext(PHONE)
    const page = await context.newPage()
    const problems: string[] = []
    page.on('console', (message) => {
      // Chromium's own /favicon.ico 404 is no script's problem.
      const text = message.text()
      if (
        /Content Security Policy/i.test(text) ||
        (message.type() === 'error' && !/404/.test(text))
      ) {
        problems.push(text)
      }
    })
    page.on('pageerror', (error) => problems.push(error.message))
    await context.addInitScript(`
      window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (event) =>
        window.cspViolations.push(event.violatedDirective + ' ' + event.blockedURI));
    `)

    const response = await page.goto(data.payment_url, { waitUntil: 'load' })
    assert.equal(response?.status(), 200)
    const csp = response?.headers()['content-security-policy'] ?? ''
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1]
    assert.exists(nonce, `a nonce in ${JSON.stringify(csp)}`)
    assert.equal(await page.evaluate(`document.querySelector('script').nonce`), nonce)

    // The stylesheet applies (the amount's 40px, the centred countdown card).
    assert.equal(
      await page.evaluate(`getComputedStyle(document.getElementById('transfer-amount')).fontSize`),
      '40px'
    )
    assert.equal(
      await page.evaluate(
        `getComputedStyle(document.getElementById('countdown').parentElement).textAlign`
      ),
      'center'
    )
    // The QR (a data: image) is drawn.
    assert.isAbove(await page.evaluate<number>(`document.getElementById('qr').naturalWidth`), 0)
    // The countdown script runs and ticks.
    await pageUntil(
      page,
      `/^\\d{2}:\\d{2}$/.test(document.getElementById('countdown').textContent)`
    )
    const first = await page.locator('#countdown').innerText()
    await pageUntil(
      page,
      `document.getElementById('countdown').textContent !== ${JSON.stringify(first)}`
    )
    // The status poll (fetch to the gateway itself) is allowed.
    const polled = await page.evaluate(
      `fetch(location.pathname + '/status', { cache: 'no-store' }).then((r) => r.status)`
    )
    assert.equal(polled, 200)

    // The slip form's script disables the button on submit; the upload comes back to the page.
    const image = await sandboxSlip({ amount: 25050 })
    await page.setInputFiles('#slip-file', {
      name: 'slip.png',
      mimeType: 'image/png',
      buffer: image,
    })
    // Listening after the page's own handler: what the button is once the submit has run.
    await page.evaluate(`document.getElementById('slip-form').addEventListener('submit', () =>
      sessionStorage.setItem('disabledOnSubmit', String(document.getElementById('slip-submit').disabled)))`)
    await page.click('#slip-submit')
    await page.waitForURL(/[?&]slip=/)
    assert.exists(await page.locator('#slip-notice').getAttribute('data-slip'))
    assert.equal(await page.evaluate(`sessionStorage.getItem('disabledOnSubmit')`), 'true')

    assert.deepEqual(await page.evaluate('window.cspViolations'), [])
    assert.deepEqual(problems, [])
  })
})
