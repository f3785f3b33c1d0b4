import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import type { BrowserContext, Page } from 'playwright-core'
import Platform from '#merchants/models/platform'
import PaymentOrder from '#payments/models/payment_order'
import { testServers } from '#tests/helpers/servers'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import { decodeQr } from '#tests/helpers/qr_decode'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * The hosted payment page (payment_url) in headless Chromium, against the
 * real HTTPS test server and MySQL: what a customer's phone actually shows.
 */

const ORDER = {
  merchant_order_id: 'WEB1001',
  amount: '250.50',
  bank: 'SCB',
  account_name: 'Somchai Jaidee',
  account_no: '123-4-56789-0',
  notify_url: 'https://merchant.example.test/callback',
}

interface CreatedOrder {
  data: Record<string, any>
  /** transfer_amount exactly as the merchant API wrote it (two decimals). */
  transferAmountText: string | null
}

/** A merchant whose platform's payment_page_domain is the test server itself. */
async function pageMerchant(): Promise<TestMerchant> {
  const who = await createDepositMerchant()
  const platform = await Platform.findOrFail(who.merchant.platformId)
  platform.paymentPageDomain = new URL(testServers.httpsUrl).host
  await platform.save()
  return who
}

async function createOrder(
  who: TestMerchant,
  path = '/payment/create',
  fields: Record<string, unknown> = {}
): Promise<CreatedOrder> {
  const response = await signedPost(path, who, authBody(who, { ...ORDER, ...fields }))
  if (response.status !== 200 || !response.json?.success) {
    throw new Error(`${path} answered ${response.status}: ${response.text}`)
  }
  const match = /"transfer_amount":(-?\d+\.\d{2})[,}]/.exec(response.text)
  return { data: response.json.data, transferAmountText: match ? match[1] : null }
}

function secondsOf(clock: string) {
  const match = /^(\d{2}):(\d{2})$/.exec(clock.trim())
  if (!match) throw new Error(`countdown is not mm:ss: ${JSON.stringify(clock)}`)
  return Number(match[1]) * 60 + Number(match[2])
}

function text(page: Page, selector: string) {
  return page.locator(selector).innerText()
}

test.group('payment page (browser)', (group) => {
  let context: BrowserContext | undefined

  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await context?.close()
    context = undefined
  })
  group.teardown(() => closeBrowser())

  async function open(url: string, options: Parameters<typeof newContext>[0] = {}) {
    context = await newContext(options)
    const page = await context.newPage()
    const response = await page.goto(url, { waitUntil: 'load' })
    return { page, response }
  }

  test('QR order on a phone: scannable QR, exact amount, account, running countdown', async ({
    assert,
  }) => {
    const who = await pageMerchant()
    const account = await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
    const { data, transferAmountText } = await createOrder(who)
    assert.equal(data.payment_url, `${testServers.httpsUrl}/pay/${data.uuid}`)
    assert.equal(transferAmountText, '250.50')

    const { page, response } = await open(data.payment_url)
    assert.equal(response?.status(), 200)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'pay')
    assert.equal(await page.locator('html').getAttribute('lang'), 'th')

    // The QR as rendered on screen decodes to the exact payload the API returned.
    const qr = page.locator('img#qr')
    assert.equal(await qr.count(), 1)
    assert.isTrue(await qr.isVisible())
    const decoded = await decodeQr(await qr.screenshot({ type: 'png' }))
    assert.equal(decoded, data.qrcode)
    // The image really loaded (not a broken <img> that happens to screenshot blank).
    assert.isAbove(
      await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      0
    )

    // transfer_amount exactly as the API gave it, two decimals.
    assert.equal(
      (await text(page, '#transfer-amount')).replace(/\s+/g, ' '),
      `${transferAmountText} THB`
    )
    assert.include(await text(page, '.warning'), 'โปรดโอนให้ตรงยอดนี้ทุกสตางค์')
    assert.equal(await text(page, '#deposit-account-no'), account.accountNo)
    // The bank by the name customers know, its code small beside it.
    assert.equal(await text(page, '#deposit-bank-name'), 'ธนาคารกสิกรไทย')
    assert.equal(await text(page, '#deposit-bank-code'), 'KBANK')
    assert.include(await text(page, 'body'), data.platform_order_id)
    await screenshot(page, 'payment-page-bank-name')

    // Countdown: mm:ss, close to the merchant's 900 s TTL, and ticking.
    // (A string: the tests compile without the DOM library.)
    await page.waitForFunction(`document.getElementById('countdown').textContent !== '--:--'`)
    const first = secondsOf(await text(page, '#countdown'))
    assert.isAtMost(first, 900)
    assert.isAtLeast(first, 880)
    await page.waitForTimeout(2100)
    const second = secondsOf(await text(page, '#countdown'))
    assert.isBelow(second, first)
    assert.isAtLeast(second, first - 4)

    await page.screenshot({ path: '/tmp/pay-page.png', fullPage: true })
  })

  test('language: Thai by default, English with ?lang=en or an English browser', async ({
    assert,
  }) => {
    const who = await pageMerchant()
    await createDepositAccount({ channel: 'qr' })
    const { data } = await createOrder(who)

    const thai = await open(data.payment_url)
    assert.include(await text(thai.page, 'body'), 'ยอดที่ต้องโอน')
    assert.notInclude(await text(thai.page, 'body'), 'Amount to transfer')
    await context!.close()

    const english = await open(`${data.payment_url}?lang=en`)
    assert.equal(await english.page.locator('html').getAttribute('lang'), 'en')
    assert.include(await text(english.page, 'body'), 'Amount to transfer')
    assert.include(await text(english.page, '.warning'), 'Transfer exactly this amount')
    assert.equal(await text(english.page, '#deposit-bank-name'), 'Kasikornbank')
    assert.notInclude(await text(english.page, 'body'), 'ยอดที่ต้องโอน')

    // The language link switches back to Thai.
    await english.page.click('header a')
    await english.page.waitForURL(/[?&]lang=th\b/)
    assert.include(await text(english.page, 'body'), 'ยอดที่ต้องโอน')
    await context!.close()

    const browserInEnglish = await open(data.payment_url, { locale: 'en-US' })
    assert.include(await text(browserInEnglish.page, 'body'), 'Amount to transfer')
  })

  test('TRANSFER order: destination account, no QR', async ({ assert }) => {
    const who = await pageMerchant()
    const account = await createDepositAccount({
      channel: 'transfer',
      bank: 'BBL',
      accountName: 'Gateway Co',
    })
    const { data } = await createOrder(who, '/payment/create-transfer')
    assert.equal(data.payment_type, 'TRANSFER')

    const { page, response } = await open(data.payment_url)
    assert.equal(response?.status(), 200)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'pay')
    assert.equal(await page.locator('#qr').count(), 0)
    assert.equal(await text(page, '#deposit-account-no'), account.accountNo)
    assert.equal(await text(page, '#deposit-bank-name'), 'ธนาคารกรุงเทพ')
    assert.equal(await text(page, '#deposit-bank-code'), 'BBL')
    assert.notInclude(await text(page, '#destination'), 'Bangkok Bank')
    assert.include(await text(page, '#destination'), 'Gateway Co')
    assert.include(await text(page, '#destination'), 'โอนเข้าบัญชี')
    assert.equal((await text(page, '#transfer-amount')).replace(/\s+/g, ' '), '250.50 THB')
  })

  test('unknown or malformed uuid: 404 and a friendly page', async ({ assert }) => {
    for (const uuid of ['0190f5e2-8a3b-7c4d-9e5f-0123456789ab', 'not-a-uuid%3Cscript%3E']) {
      const { page, response } = await open(`${testServers.httpsUrl}/pay/${uuid}`)
      assert.equal(response?.status(), 404, uuid)
      assert.equal(await page.locator('#not-found').count(), 1, uuid)
      assert.include(await text(page, '#not-found'), 'ไม่พบรายการชำระเงินนี้')
      assert.equal(await page.locator('#qr').count(), 0)
      await context!.close()
    }
  })

  test('paid: an open page switches to the paid state by itself; a fresh load shows it', async ({
    assert,
  }) => {
    const who = await pageMerchant()
    await createDepositAccount({ channel: 'qr' })
    const { data } = await createOrder(who)

    const { page } = await open(data.payment_url)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'pay')

    const order = await PaymentOrder.findByOrFail('uuid', data.uuid)
    order.status = 'unsettled_paid'
    await order.save()

    // The page polls /pay/:uuid/status every 5 s and reloads when the state changed.
    await page.waitForSelector('main[data-state="paid"] #final', { timeout: 8000 })
    assert.equal(await page.locator('#qr').count(), 0)

    const fresh = await context!.newPage()
    await fresh.goto(data.payment_url)
    assert.equal(await fresh.locator('main').getAttribute('data-state'), 'paid')
    assert.include(await text(fresh, '#final'), 'ได้รับชำระเงินแล้ว')
    assert.include(await text(fresh, '#final'), '250.50')
    assert.equal(await fresh.locator('#qr').count(), 0)
  })

  test('expired: expire_at in the past shows expired and no QR, even before the expiry job', async ({
    assert,
  }) => {
    const who = await pageMerchant()
    await createDepositAccount({ channel: 'qr' })
    const { data } = await createOrder(who)

    const order = await PaymentOrder.findByOrFail('uuid', data.uuid)
    assert.equal(order.status, 'open')
    order.expireAt = DateTime.utc().minus({ minutes: 1 })
    await order.save()

    const { page, response } = await open(data.payment_url)
    assert.equal(response?.status(), 200)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'expired')
    assert.equal(await page.locator('#final').count(), 1)
    assert.include(await text(page, '#final'), 'รายการนี้หมดอายุแล้ว')
    assert.equal(await page.locator('#qr').count(), 0)
    assert.equal(await page.locator('#deposit-account-no').count(), 0)
  })

  test('FLEX on an external sandbox channel: continue link to the provider page', async ({
    assert,
  }) => {
    const who = await pageMerchant()
    await createDepositAccount({ channel: 'external' })
    const { data } = await createOrder(who, '/payment/create-flex')
    assert.equal(data.payment_type, 'FLEX')

    context = await newContext()
    const page = await context.newPage()
    // The page also moves on by itself (meta refresh after 2 s); the link is
    // checked right after load, then followed.
    await page.goto(data.payment_url, { waitUntil: 'domcontentloaded' })
    assert.equal(await page.locator('main').getAttribute('data-state'), 'redirect')
    const href = await page.locator('#continue').getAttribute('href')
    assert.match(
      href ?? '',
      new RegExp(`^${testServers.httpsUrl.replace(/[.]/g, '\\.')}/sandbox/provider/[^/]+$`)
    )
    assert.equal(await page.locator('#qr').count(), 0)

    // Followed by its address: a click races the page's own move on a slow machine
    // (the refresh may already have left the page when the click looks for the link).
    await page.goto(href!, { waitUntil: 'domcontentloaded' })
    await page.waitForSelector('#sandbox-provider')
    assert.equal(page.url(), href)
    assert.include(await text(page, '#sandbox-provider'), 'Sandbox payment provider')

    // Left alone, the page takes the customer there by itself (meta refresh, 2 s).
    const idle = await context.newPage()
    await idle.goto(data.payment_url, { waitUntil: 'domcontentloaded' })
    await idle.waitForURL(href!, { timeout: 6000 })
    await idle.waitForSelector('#sandbox-provider')
  })
})
