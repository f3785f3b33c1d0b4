import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { connect } from 'node:tls'
import { DateTime } from 'luxon'
import type { BrowserContext, Page } from 'playwright-core'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import drive from '@adonisjs/drive/services/main'
import env from '#start/env'
import { RedisConnections } from '#core/redis'
import Platform from '#merchants/models/platform'
import PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import { testServers } from '#tests/helpers/servers'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import { rawRequest, type RawResponse } from '#tests/helpers/http'
import { startSecondGateway } from '#tests/helpers/second_process'
import { noQrImage, sandboxSlip } from '#tests/helpers/slips'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * A customer sends a payment slip from the hosted payment page, in headless
 * Chromium on a phone, against the real HTTPS server, MySQL and Redis. The
 * per-IP limit is driven with plain multipart requests from other loopback
 * addresses, across two gateway processes.
 */

// The customer's words (app/payment_page/customer_messages.ts), written out
// here so that a change of wording is a visible change of this test.
const RECEIPT_TH = 'ได้รับสลิปแล้ว กำลังตรวจสอบ ไม่ต้องโอนซ้ำ'
const RECEIPT_EN = 'We have your slip and are checking it. Please do not pay again.'
/** The merchant API's verification_msg for a pending slip: for merchants, never on the page. */
const API_RECEIPT = 'slip received, verification pending.'

/** Words of verification_msg (spec) other than the pending receipt: never on the page. */
const VERIFICATION_WORDS = [
  'amount ok',
  'destination ok',
  'transfer in time',
  'ref ok',
  'ref error',
  'transfer before create',
  'qrcode error',
  "can't read qr data",
  'amount error',
  'destination error',
]

let workDir = ''

interface Order {
  uuid: string
  paymentUrl: string
  platformOrderId: string
  account: DepositAccount
  transferAmount: number
}

/** A merchant whose platform's payment_page_domain is the test server, and one open QR order. */
async function openOrder(channel: 'qr' | 'transfer' = 'qr'): Promise<Order> {
  const who: TestMerchant = await createDepositMerchant()
  const platform = await Platform.findOrFail(who.merchant.platformId)
  platform.paymentPageDomain = new URL(testServers.httpsUrl).host
  await platform.save()
  const account = await createDepositAccount({ channel })
  const path = channel === 'qr' ? '/payment/create' : '/payment/create-transfer'
  const response = await signedPost(
    path,
    who,
    authBody(who, {
      merchant_order_id: `SLIP${randomBytes(4).toString('hex')}`,
      amount: '250.50',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '123-4-56789-0',
    })
  )
  if (response.status !== 200 || !response.json?.success) {
    throw new Error(`${path} answered ${response.status}: ${response.text}`)
  }
  const order = await PaymentOrder.findByOrFail('uuid', response.json.data.uuid)
  return {
    uuid: order.uuid,
    paymentUrl: response.json.data.payment_url,
    platformOrderId: order.platformOrderId,
    account,
    transferAmount: order.transferAmount,
  }
}

/** The order's own sandbox slip, as the customer's banking app would show it. */
function slipOf(order: Order, format: 'png' | 'jpg' = 'png') {
  return sandboxSlip({
    amount: order.transferAmount,
    receiverAccountNo: order.account.accountNo,
    receiverName: order.account.accountName,
    format,
  })
}

async function fileOf(name: string, bytes: Uint8Array) {
  const path = join(workDir, `${randomBytes(4).toString('hex')}-${name}`)
  await writeFile(path, bytes)
  return path
}

async function slipsOf(order: Order) {
  return db
    .from('payment_slips')
    .join('payment_orders', 'payment_orders.id', 'payment_slips.payment_order_id')
    .where('payment_orders.uuid', order.uuid)
    .select('payment_slips.*')
    .orderBy('payment_slips.id')
}

/** Files the drive holds for an order (local disk: storage/slips/<uuid>/). */
async function storedFiles(order: Order) {
  const root = env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')
  try {
    return await readdir(`${root}/slips/${order.uuid}`)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Moves an order's slips two minutes into the past: its cooldown is over. */
async function passCooldown(order: Order) {
  await db.rawQuery(
    `UPDATE payment_slips s JOIN payment_orders o ON o.id = s.payment_order_id
        SET s.created_at = s.created_at - INTERVAL 2 MINUTE
      WHERE o.uuid = ?`,
    [order.uuid]
  )
}

/** The page's form as a browser would send it, from a chosen loopback address. */
function postSlip(
  order: Pick<Order, 'uuid'>,
  file: { bytes: Uint8Array; name?: string; type?: string } | null,
  options: { baseUrl?: string; localAddress?: string; lang?: 'th' | 'en' } = {}
): Promise<RawResponse> {
  const boundary = `----slipform${randomBytes(8).toString('hex')}`
  const parts: Buffer[] = []
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="slip"; filename="${file.name ?? 'slip.png'}"\r\n` +
          `Content-Type: ${file.type ?? 'image/png'}\r\n\r\n`
      ),
      Buffer.from(file.bytes),
      Buffer.from('\r\n')
    )
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return rawRequest(`/pay/${order.uuid}/slip?lang=${options.lang ?? 'th'}`, {
    body: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    baseUrl: options.baseUrl,
    localAddress: options.localAddress,
  })
}

/** Where the answer sends the browser back to, and the outcome it names. */
function outcomeOf(response: RawResponse, order: Pick<Order, 'uuid'>) {
  if (response.status !== 303) {
    throw new Error(`expected 303, got ${response.status}: ${response.text.slice(0, 300)}`)
  }
  const location = new URL(String(response.headers.location), testServers.httpsUrl)
  if (location.pathname !== `/pay/${order.uuid}`) throw new Error(`back to ${location}`)
  return location.searchParams.get('slip')
}

/**
 * Announces a body of `contentLength` bytes, sends none of it, and returns
 * the head of the answer: the server must answer without reading the body.
 */
function answerBeforeBody(path: string, contentType: string, contentLength: number) {
  const base = new URL(testServers.httpsUrl)
  return new Promise<string>((resolve, reject) => {
    const socket = connect({
      host: base.hostname,
      port: Number(base.port),
      ca: testServers.certificate,
      checkServerIdentity: () => undefined,
    })
    let head = ''
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer before the body')))
    socket.on('secureConnect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${base.host}\r\nContent-Type: ${contentType}\r\n` +
          `Content-Length: ${contentLength}\r\n\r\n`
      )
    })
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1')
      if (head.includes('\r\n\r\n')) {
        socket.destroy()
        resolve(head.slice(0, head.indexOf('\r\n\r\n') + 2))
      }
    })
    socket.on('error', reject)
  })
}

function text(page: Page, selector: string) {
  return page.locator(selector).innerText()
}

async function clearSlipRateLimits() {
  const redis = (await app.container.make(RedisConnections)).main
  const keys = await redis.keys('gw:rl:pay-slip-ip:*')
  if (keys.length > 0) await redis.del(...keys)
}

test.group('payment page slip upload (browser)', (group) => {
  let context: BrowserContext | undefined

  group.setup(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'slip-page-'))
  })
  group.each.setup(async () => {
    await resetDatabase()
    await clearSlipRateLimits()
  })
  group.each.teardown(async () => {
    await context?.close()
    context = undefined
    // The images of this test's accepted slips, with their order's folder.
    const keys = await db.from('payment_slips').select('storage_key')
    for (const folder of new Set(keys.map((row) => dirname(row.storage_key)))) {
      // Never the drive's root: only an order's own folder (slips/<uuid>).
      if (folder.includes('/')) await drive.use().deleteAll(folder)
    }
  })
  group.teardown(async () => {
    await closeBrowser()
    await rm(workDir, { recursive: true, force: true })
  })
  group.each.timeout(90_000)

  async function open(url: string, options: Parameters<typeof newContext>[0] = {}) {
    await context?.close()
    context = await newContext(options)
    const page = await context.newPage()
    const response = await page.goto(url, { waitUntil: 'load' })
    return { page, response }
  }

  /** Chooses the file and sends the form as a customer does; resolves on the page it lands on. */
  async function send(page: Page, path: string) {
    await page.locator('#slip-file').setInputFiles(path)
    // The page it lands on may have the same address as this one: wait for a new document.
    const landed = page.waitForEvent('framenavigated', {
      predicate: (frame) => frame === page.mainFrame(),
    })
    await page.click('#slip-submit')
    await landed
    await page.waitForLoadState('load')
    return new URL(page.url()).searchParams.get('slip')
  }

  test('Thai, on a phone: the form sits below the transfer details; a slip gets the pending receipt and flags the order', async ({
    assert,
  }) => {
    const order = await openOrder()
    const { page } = await open(order.paymentUrl)
    assert.equal(await page.locator('html').getAttribute('lang'), 'th')
    assert.equal(await page.locator('main').getAttribute('data-state'), 'pay')

    // Below the QR and the transfer details, in Thai.
    assert.equal(await page.locator('#qr-section ~ #destination + #slip-upload').count(), 1)
    assert.include(await text(page, '#slip-upload'), 'อัปโหลดสลิป')
    assert.equal(await page.locator('#slip-file').getAttribute('accept'), 'image/*')
    assert.equal(await page.locator('#slip-notice').count(), 0)
    // Fits a phone's width: nothing sticks out of the viewport.
    const box = await page.locator('#slip-upload').boundingBox()
    assert.isAtMost(box!.x + box!.width, 390)

    const outcome = await send(page, await fileOf('slip.png', await slipOf(order)))
    assert.equal(outcome, 'received')
    assert.equal(new URL(page.url()).pathname, `/pay/${order.uuid}`)
    assert.equal(await text(page, '#slip-notice'), RECEIPT_TH)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'review')
    const body = await text(page, 'body')
    for (const word of VERIFICATION_WORDS) assert.notInclude(body.toLowerCase(), word)
    assert.notInclude(body, API_RECEIPT)
    await screenshot(page, 'payment-page-slip-received')

    // The order is flagged for review; its status does not move on an upload.
    const stored = await PaymentOrder.findByOrFail('uuid', order.uuid)
    assert.isTrue(stored.awaitingReview)
    assert.equal(stored.status, 'open')
    const slips = await slipsOf(order)
    assert.lengthOf(slips, 1)
    assert.equal(slips[0].source, 'payment_page')
    assert.equal(slips[0].mime, 'image/png')
    assert.lengthOf(await storedFiles(order), 1)

    // A reload shows the same receipt and does not send the slip again.
    await page.reload()
    assert.equal(await text(page, '#slip-notice'), RECEIPT_TH)
    assert.lengthOf(await slipsOf(order), 1)
  })

  test('English, without JavaScript: a JPG slip, and an unreadable picture, both get only the pending receipt', async ({
    assert,
  }) => {
    const order = await openOrder('transfer')
    const { page } = await open(`${order.paymentUrl}?lang=en`, { javaScriptEnabled: false })
    assert.equal(await page.locator('html').getAttribute('lang'), 'en')
    assert.equal(await page.locator('#destination + #slip-upload').count(), 1)
    assert.include(await text(page, '#slip-upload'), 'Upload your payment slip')
    assert.notInclude(await text(page, 'body'), 'อัปโหลดสลิป')

    assert.equal(await send(page, await fileOf('slip.jpg', await slipOf(order, 'jpg'))), 'received')
    assert.equal(await text(page, '#slip-notice'), RECEIPT_EN)
    assert.notInclude(await text(page, 'body'), API_RECEIPT)
    assert.equal(await page.locator('html').getAttribute('lang'), 'en')
    await screenshot(page, 'payment-page-slip-received-en')
    const [first] = await slipsOf(order)
    assert.equal(first.mime, 'image/jpeg')

    // A picture without a QR: the verification says so, the customer is not told.
    const other = await openOrder()
    const second = await open(`${other.paymentUrl}?lang=en`, { javaScriptEnabled: false })
    assert.equal(await send(second.page, await fileOf('photo.png', await noQrImage())), 'received')
    assert.equal(await text(second.page, '#slip-notice'), RECEIPT_EN)
    const [unreadable] = await slipsOf(other)
    assert.notEqual(unreadable.verification_msg, API_RECEIPT)
    const body = (await text(second.page, 'body')).toLowerCase()
    for (const word of VERIFICATION_WORDS) assert.notInclude(body, word)
    assert.notInclude(body, unreadable.verification_msg.toLowerCase())
    assert.isTrue((await PaymentOrder.findByOrFail('uuid', other.uuid)).awaitingReview)
  })

  test('a file that is not a PNG or JPG, or too big, is refused with a message; nothing is stored', async ({
    assert,
  }) => {
    const order = await openOrder()
    const { page } = await open(order.paymentUrl)

    // Named like a picture, but a PDF by its bytes.
    const pdf = await fileOf('slip.jpg', Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'))
    assert.equal(await send(page, pdf), 'not-image')
    assert.equal(await page.locator('#slip-notice.refused').count(), 1)
    assert.include(await text(page, '#slip-notice'), 'ไฟล์นี้ไม่ใช่รูปภาพ')
    assert.equal(await page.locator('main').getAttribute('data-state'), 'pay')
    // The form is still there to try again.
    assert.equal(await page.locator('#slip-form').count(), 1)

    const textFile = await fileOf('notes.txt', Buffer.from('โอนแล้วนะคะ'))
    assert.equal(await send(page, textFile), 'not-image')

    // About 8 MB is the most: a bigger photo is refused, in English on an English page.
    await page.goto(`${order.paymentUrl}?lang=en`)
    const huge = Buffer.concat([await slipOf(order), randomBytes(8 * 1024 * 1024 + 4096)])
    assert.equal(await send(page, await fileOf('huge.png', huge)), 'too-big')
    assert.equal(
      await text(page, '#slip-notice'),
      'The file is too large: a slip image can be 8 MB at most.'
    )

    const body = await text(page, 'body')
    assert.notInclude(body, 'invalid-inputs')
    assert.notInclude(body, '"success"')
    assert.lengthOf(await slipsOf(order), 0)
    assert.deepEqual(await storedFiles(order), [])
    const stored = await PaymentOrder.findByOrFail('uuid', order.uuid)
    assert.isFalse(stored.awaitingReview)
    assert.equal(stored.status, 'open')

    // Without a file (a client that ignores `required`), and a body announced as far too big.
    assert.equal(outcomeOf(await postSlip(order, null), order), 'missing')
    const declared = await answerBeforeBody(
      `/pay/${order.uuid}/slip`,
      'multipart/form-data; boundary=x',
      64 * 1024 * 1024
    )
    assert.match(declared, /^HTTP\/1\.1 303 /)
    assert.match(declared, /\r\nlocation: \/pay\/[^?]+\?lang=th&slip=too-big\r\n/i)
    assert.lengthOf(await slipsOf(order), 0)
  })

  test('per order: a cooldown between uploads and a cap on their number', async ({ assert }) => {
    const order = await openOrder()
    const from = { localAddress: '127.0.0.5' }

    assert.equal(
      outcomeOf(await postSlip(order, { bytes: await slipOf(order) }, from), order),
      'received'
    )

    // Right after an accepted upload: wait, in the customer's language.
    const { page } = await open(order.paymentUrl)
    assert.equal(await page.locator('main').getAttribute('data-state'), 'review')
    assert.include(await text(page, '#slip-upload'), 'ส่งรูปสลิปผิด')
    assert.equal(await send(page, await fileOf('again.png', await slipOf(order))), 'wait')
    assert.include(await text(page, '#slip-notice'), 'โปรดรอสักครู่')
    assert.lengthOf(await slipsOf(order), 1)
    assert.lengthOf(await storedFiles(order), 1)

    // Once the cooldown is over, up to five in all.
    for (let accepted = 2; accepted <= 5; accepted++) {
      await passCooldown(order)
      const response = await postSlip(order, { bytes: await slipOf(order) }, from)
      assert.equal(outcomeOf(response, order), 'received', `upload ${accepted}`)
    }
    assert.lengthOf(await slipsOf(order), 5)

    await passCooldown(order)
    await page.goto(`${order.paymentUrl}?lang=en`)
    assert.equal(await send(page, await fileOf('sixth.png', await slipOf(order))), 'too-many')
    assert.equal(
      await text(page, '#slip-notice'),
      'The most slips this payment accepts have been sent. Our team is checking them.'
    )
    assert.lengthOf(await slipsOf(order), 5)
    assert.lengthOf(await storedFiles(order), 5)
    assert.equal((await PaymentOrder.findByOrFail('uuid', order.uuid)).status, 'open')
  })

  test('only an open order at most 30 days old takes slips', async ({ assert }) => {
    const old = await openOrder()
    const stored = await PaymentOrder.findByOrFail('uuid', old.uuid)
    stored.orderAt = DateTime.utc().minus({ days: 31 })
    stored.expireAt = DateTime.utc().plus({ minutes: 10 })
    await stored.save()
    const { page } = await open(`${old.paymentUrl}?lang=en`)
    assert.equal(await page.locator('#slip-form').count(), 0)
    const answer = await postSlip(old, { bytes: await slipOf(old) }, { lang: 'en' })
    assert.equal(outcomeOf(answer, old), 'closed')
    await page.goto(String(new URL(String(answer.headers.location), old.paymentUrl)))
    assert.equal(await text(page, '#slip-notice'), 'This payment no longer accepts slips.')

    const failed = await openOrder()
    await PaymentOrder.query().where('uuid', failed.uuid).update({ status: 'error' })
    assert.equal(
      outcomeOf(await postSlip(failed, { bytes: await slipOf(failed) }), failed),
      'closed'
    )
    const expired = await open(failed.paymentUrl)
    assert.equal(await expired.page.locator('main').getAttribute('data-state'), 'expired')
    assert.equal(await expired.page.locator('#slip-form').count(), 0)

    assert.lengthOf(await slipsOf(old), 0)
    assert.lengthOf(await slipsOf(failed), 0)

    const unknown = await postSlip({ uuid: '0190f5e2-8a3b-7c4d-9e5f-0123456789ab' }, null)
    assert.equal(unknown.status, 404)
    assert.include(unknown.text, 'ไม่พบรายการชำระเงินนี้')
  })

  test('10 requests per minute per address and order, counted across two web processes: the 11th is refused, a neighbour on the same address is not', async ({
    assert,
  }) => {
    const second = await startSecondGateway()
    try {
      const order = await openOrder()
      const from = '127.0.0.7'
      const outcomes: Array<string | null> = []
      for (let i = 0; i < 10; i++) {
        const file =
          i === 0 ? { bytes: await slipOf(order) } : { bytes: Buffer.from('not a picture') }
        const response = await postSlip(order, file, {
          localAddress: from,
          baseUrl: i % 2 ? second.url : undefined,
        })
        outcomes.push(outcomeOf(response, order))
      }
      assert.deepEqual(outcomes, ['received', ...Array(9).fill('not-image')])

      // The 11th, a valid slip, on the process that saw only five of them.
      const eleventh = await postSlip(
        order,
        { bytes: await slipOf(order) },
        { localAddress: from, baseUrl: second.url }
      )
      assert.equal(outcomeOf(eleventh, order), 'rate-limited')
      assert.match(String(eleventh.headers['retry-after']), /^\d+$/)
      assert.isAtMost(Number(eleventh.headers['retry-after']), 60)
      assert.lengthOf(await slipsOf(order), 1)

      // Another address is not affected.
      const elsewhere = await postSlip(order, null, { localAddress: '127.0.0.8' })
      assert.equal(outcomeOf(elsewhere, order), 'missing')

      // Nor is another customer behind the same address (one carrier NAT):
      // their own order's slip goes through.
      const neighbour = await openOrder()
      const theirs = await postSlip(
        neighbour,
        { bytes: await slipOf(neighbour) },
        { localAddress: from, baseUrl: second.url }
      )
      assert.equal(outcomeOf(theirs, neighbour), 'received')
      assert.lengthOf(await slipsOf(neighbour), 1)

      // Requests that name no open order count per address: guessing order
      // ids from the same address is stopped after ten.
      const guesses: number[] = []
      for (let i = 0; i < 11; i++) {
        const guess = await postSlip(
          { uuid: `0190f5e2-8a3b-7c4d-9e5f-0123456789${String(i).padStart(2, '0')}` },
          null,
          { localAddress: '127.0.0.9' }
        )
        guesses.push(guess.status)
      }
      assert.deepEqual(guesses, [...Array(10).fill(404), 303])

      // A customer whose address used up its minute sees why, on the page.
      const other = await openOrder()
      for (let i = 0; i < 10; i++) await postSlip(other, null, { localAddress: '127.0.0.1' })
      const { page } = await open(other.paymentUrl)
      assert.equal(await send(page, await fileOf('slip.png', await slipOf(other))), 'rate-limited')
      assert.include(await text(page, '#slip-notice'), 'มีการส่งมากเกินไป')
      assert.lengthOf(await slipsOf(other), 0)
    } finally {
      await second.stop()
    }
  })
})
