import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import { parse } from 'csv-parse/sync'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import CallbackAttempt from '#callbacks/models/callback_attempt'
import { uploadSlip } from '#slips/actions/upload_slip'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { configureCallbacks } from '#callbacks/settings'
import { queue } from '#core/queue/queue_manager'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import { sandboxSlip } from '#tests/helpers/slips'
import { startTestWorker, until } from '#tests/helpers/worker'
import { startCallbackReceiver, type CallbackReceiver } from '#tests/helpers/callback_receiver'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, csrfToken, LAPTOP, signedInAs } from '#tests/helpers/admin'

/**
 * The back-office Orders pages in headless Chromium against the real HTTPS
 * server, MariaDB, Redis and a callback worker: orders are created through
 * the merchant API, paid through the sandbox bank's statement line, and
 * every page is checked against the database and the audit log.
 */

let sequence = 0

async function createPayment(
  who: TestMerchant,
  fields: { amount: string; account_no?: string; notify_url?: string; merchant_order_id?: string }
) {
  sequence += 1
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: fields.merchant_order_id ?? `ORD${sequence}`,
      amount: fields.amount,
      bank: 'KBANK',
      account_name: 'Somchai Jaidee',
      account_no: fields.account_no ?? '1234567890',
      ...(fields.notify_url ? { notify_url: fields.notify_url } : {}),
    })
  )
  if (response.status !== 200) throw new Error(`payment create: ${response.text}`)
  return response.json.data.platform_order_id as string
}

async function createPayout(
  who: TestMerchant,
  path: '/withdraw/create' | '/thb-settlement/create',
  amount: string
) {
  sequence += 1
  const response = await signedPost(
    path,
    who,
    authBody(who, { ...PAYOUT_FIELDS, merchant_order_id: `PO${sequence}`, amount })
  )
  if (response.status !== 200) throw new Error(`${path}: ${response.text}`)
  return response.json.data.platform_order_id as string
}

/** The platform_order_ids the orders table lists, in its order. */
async function listed(page: Page) {
  return page.locator('#orders-table tbody tr[id^=order-] td:first-child a').allInnerTexts()
}

async function search(page: Page, fields: Record<string, string>, kind = 'payments') {
  await page.goto(adminUrl(`/orders?kind=${kind}`))
  for (const [name, value] of Object.entries(fields)) {
    if ((await page.locator(`#filter-${name}`).evaluate((el) => el.tagName)) === 'SELECT') {
      await page.selectOption(`#filter-${name}`, value)
    } else {
      await page.fill(`#filter-${name}`, value)
    }
  }
  await Promise.all([page.waitForNavigation(), page.click('#search-orders')])
}

const total = async (page: Page) =>
  (await page.locator('.pagination .muted, p.muted:has-text("in all")').first().innerText()).trim()

test.group('back-office orders (browser)', (group) => {
  const contexts: BrowserContext[] = []
  let receiver: CallbackReceiver
  let stopWorker: () => Promise<void>

  group.setup(async () => {
    receiver = await startCallbackReceiver()
    const restore = configureCallbacks({
      extraCa: receiver.certificate,
      timeoutMs: 2000,
      allowPrivateTargets: true,
    })
    return async () => {
      restore()
      await receiver.close()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await queue('callbacks').obliterate({ force: true })
    receiver.reset()
    stopWorker = startTestWorker('callbacks')
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
      await stopWorker()
    }
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  async function signIn(email: string, role: 'admin' | 'operator' | 'viewer') {
    const session = await signedInAs(email, role)
    contexts.push(session.context)
    return session.page
  }

  test('search by filters, sort and pages; saved views shared with the team', async ({
    assert,
  }) => {
    const shop = await createDepositMerchant()
    const other = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const shopOrders: string[] = []
    for (let i = 0; i < 28; i++) {
      shopOrders.push(await createPayment(shop, { amount: `${100 + i}.00` }))
    }
    const special = await createPayment(other, {
      amount: '5000.00',
      account_no: '987-6-54321-0',
      merchant_order_id: 'BIGONE1',
    })
    const small = await createPayment(other, { amount: '20.00' })
    const payee = await createPayoutMerchant(100_000_00)
    const withdrawal = await createPayout(payee, '/withdraw/create', '300.00')
    const settlement = await createPayout(payee, '/thb-settlement/create', '400.00')

    const page = await signIn('orders@example.com', 'operator')
    await page.click('header.top nav a:has-text("Orders")')
    await page.waitForURL(/\/admin\/orders/)
    assert.include(await total(page), '30 in all')
    assert.lengthOf(await listed(page), 25)
    // Newest first: the last order created leads.
    assert.equal((await listed(page))[0], small)
    await Promise.all([page.waitForNavigation(), page.click('.pagination a:has-text("Next")')])
    assert.lengthOf(await listed(page), 5)
    assert.include(await page.locator('.pagination .current').innerText(), 'Page 2 of 2')

    // Sort by amount, ascending then descending, across pages.
    await page.goto(adminUrl('/orders'))
    await Promise.all([page.waitForNavigation(), page.click('#sort-amount')])
    assert.equal((await listed(page))[0], special)
    await Promise.all([page.waitForNavigation(), page.click('#sort-amount')])
    assert.equal((await listed(page))[0], small)
    assert.equal((await listed(page))[1], shopOrders[0])
    await Promise.all([page.waitForNavigation(), page.click('.pagination a:has-text("Next")')])
    assert.equal((await listed(page)).at(-1), special)

    // Filters: merchant, amount range (THB), customer account (typed with dashes), ids.
    await search(page, { merchant: other.merchantId })
    assert.sameMembers(await listed(page), [special, small])
    await search(page, { amount_min: '110', amount_max: '1,000.50' })
    assert.sameMembers(await listed(page), shopOrders.slice(10))
    await search(page, { account_no: '987-6-54321-0' })
    assert.deepEqual(await listed(page), [special])
    assert.equal(await page.inputValue('#filter-account_no'), '987-6-54321-0')
    await search(page, { merchant_order_id: 'BIGONE1' })
    assert.deepEqual(await listed(page), [special])
    await search(page, { platform_order_id: special.slice(0, 12) })
    assert.sameMembers(await listed(page), [special, small])
    await search(page, { platform_order_id: shopOrders[3] })
    assert.deepEqual(await listed(page), [shopOrders[3]])
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Bangkok' }).format(new Date())
    await search(page, { from: today, to: today, merchant: other.merchantId })
    assert.lengthOf(await listed(page), 2)
    await search(page, { from: '2020-01-01', to: '2020-01-31' })
    assert.lengthOf(await listed(page), 0)

    // A filter that cannot be understood is shown beside its field; nothing is listed.
    await search(page, { amount_min: 'ten baht' })
    assert.include(await page.locator('#error-amount_min').innerText(), 'THB amount')
    assert.equal(await page.locator('#orders-table').count(), 0)
    assert.equal(await page.locator('#export-csv').count(), 0)

    // A withdrawal's id pasted on the payments tab finds it on its own tab; public and internal statuses.
    await search(page, { platform_order_id: withdrawal })
    assert.equal(await page.locator('#kind-withdrawals.active').count(), 1)
    assert.deepEqual(await listed(page), [withdrawal])
    await Promise.all([
      page.waitForNavigation(),
      page.click(`#order-${withdrawal} td:first-child a`),
    ])
    assert.equal((await page.locator('#field-status').innerText()).trim(), 'open')
    assert.equal((await page.locator('#field-internal_status').innerText()).trim(), 'new')
    assert.include(await page.locator('#order-timeline').innerText(), 'created → new')
    const hold = await page.locator('#order-ledger').innerText()
    assert.include(hold, 'withdraw_hold')
    assert.include(hold, `${payee.merchantId} · frozen`)
    assert.include(hold, '300.00')
    assert.equal(await page.locator('#resend-callback').count(), 0)
    await search(page, { status: 'public:open' }, 'withdrawals')
    assert.deepEqual(await listed(page), [withdrawal])
    await search(page, { status: 'new' }, 'withdrawals')
    assert.deepEqual(await listed(page), [withdrawal])
    await search(page, { status: 'public:failed' }, 'withdrawals')
    assert.lengthOf(await listed(page), 0)
    await page.click('#kind-settlements')
    await page.waitForURL(/kind=settlements/)
    assert.deepEqual(await listed(page), [settlement])

    // Saved view: the current search under a name, for everyone; only its author deletes it.
    await search(page, { merchant: other.merchantId, amount_min: '1000' })
    await page.fill('#save-view-form #field-name', 'Large payments of the other shop')
    await Promise.all([page.waitForNavigation(), page.click('#save-view-form button')])
    assert.include(await page.locator('.flash.success').innerText(), 'saved')
    assert.deepEqual(await listed(page), [special])
    const saved = await db.from('saved_order_views').firstOrFail()
    assert.equal(saved.kind, 'payments')
    assert.include(saved.query, `merchant=${other.merchantId}`)
    assert.include(saved.query, 'amount_min=1000')
    assert.notInclude(saved.query, 'page=')
    await page.goto(adminUrl('/orders'))
    await screenshot(page, 'orders')

    // The same name again is refused beside the field.
    await page.fill('#save-view-form #field-name', 'large payments of the other shop')
    await Promise.all([page.waitForNavigation(), page.click('#save-view-form button')])
    assert.include(await page.locator('#save-view-form #error-name').innerText(), 'already exists')

    const colleague = await signIn('colleague@example.com', 'viewer')
    await colleague.goto(adminUrl('/orders'))
    const view = colleague.locator(`#view-${saved.id}`)
    assert.include(await view.innerText(), 'orders@example.com')
    assert.equal(await view.locator('button').count(), 0)
    await Promise.all([colleague.waitForNavigation(), view.locator('a').click()])
    assert.deepEqual(await listed(colleague), [special])
    const refused = await colleague.request.post(adminUrl(`/orders/views/${saved.id}/delete`), {
      form: { _csrf: (await csrfToken(colleague))! },
      maxRedirects: 0,
    })
    assert.equal(refused.status(), 302)
    assert.lengthOf(await db.from('saved_order_views'), 1)

    await page.goto(adminUrl('/orders'))
    await Promise.all([page.waitForNavigation(), page.click(`#view-${saved.id} button`)])
    assert.include(await page.locator('.flash.success').innerText(), 'deleted')
    assert.lengthOf(await db.from('saved_order_views'), 0)
    const audit = await db
      .from('audit_logs')
      .whereIn('action', ['order_view.save', 'order_view.delete'])
      .orderBy('id')
      .select('action', 'actor')
    assert.deepEqual(
      audit.map((row) => `${row.action} ${row.actor}`),
      [
        'order_view.save operator:orders@example.com',
        'order_view.delete operator:orders@example.com',
      ]
    )
  })

  test('CSV export of a filter: every match, not just the page, and audited', async ({
    assert,
  }) => {
    const shop = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const created: string[] = []
    for (let i = 0; i < 32; i++)
      created.push(await createPayment(shop, { amount: `${200 + i}.00` }))
    // "=cmd" as a customer name: a spreadsheet must not run it.
    const tricky = await createPayment(shop, { amount: '20.00' })
    await PaymentOrder.query()
      .where('platform_order_id', tricky)
      .update({ customer_account_name: '=HYPERLINK("x")' })

    const page = await signIn('export@example.com', 'viewer')
    await search(page, { amount_min: '201', amount_max: '230' })
    assert.include(await total(page), '30 in all')
    assert.lengthOf(await listed(page), 25)

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')])
    const text = await readFile((await download.path())!, 'utf8')
    const rows: Record<string, string>[] = parse(text, { columns: true })
    assert.lengthOf(rows, 30)
    assert.sameMembers(
      rows.map((row) => row.platform_order_id),
      created.slice(1, 31)
    )
    // Newest first, as listed; amounts in THB, times in GMT+7.
    assert.equal(rows[0].platform_order_id, created[30])
    assert.equal(rows[0].amount, '230.00')
    assert.equal(rows[0].merchant_id, shop.merchantId)
    assert.equal(rows[0].status, 'open')
    assert.match(rows[0].order_datetime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)

    const audit = await db.from('audit_logs').where('action', 'orders.export').firstOrFail()
    const details = typeof audit.details === 'string' ? JSON.parse(audit.details) : audit.details
    assert.equal(audit.actor, 'operator:export@example.com')
    assert.equal(details.rows, 30)
    assert.equal(details.kind, 'payments')
    assert.deepEqual(details.filters, { amount_min: '201', amount_max: '230' })

    // The whole kind, with the formula neutralised.
    await page.goto(adminUrl('/orders?kind=payments'))
    const [all] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')])
    const everything: Record<string, string>[] = parse(
      await readFile((await all.path())!, 'utf8'),
      {
        columns: true,
      }
    )
    assert.lengthOf(everything, 33)
    assert.equal(
      everything.find((row) => row.platform_order_id === tricky)!.account_name,
      `'=HYPERLINK("x")`
    )
    const exports = await db.from('audit_logs').where('action', 'orders.export').orderBy('id')
    assert.lengthOf(exports, 2)
  })

  test('the order page of a paid payment: timeline, ledger, statement line, slip, callbacks; resend; a viewer cannot resend', async ({
    assert,
  }) => {
    const shop = await createDepositMerchant()
    receiver.trust(shop.merchantId, shop.secret)
    const account = await createDepositAccount({ channel: 'qr' })
    const platformOrderId = await createPayment(shop, {
      amount: '250.00',
      notify_url: receiver.url('/paid'),
    })
    const order = await PaymentOrder.findByOrFail('platform_order_id', platformOrderId)

    // The customer's slip, uploaded before the transfer shows on the statement.
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
    const paid = await sandboxPay({ platform_order_id: platformOrderId }, TEST_ACTOR)
    assert.equal(paid.orderStatus, 'unsettled_paid')
    assert.isTrue(
      await until(async () => (await CallbackAttempt.query()).length === 1, 15_000),
      'the PAID callback was attempted'
    )

    const page = await signIn('ops@example.com', 'operator')
    // Found by the slip's hash and by its transaction reference.
    await search(page, { slip: slip.sha256.toUpperCase() })
    assert.deepEqual(await listed(page), [platformOrderId])
    await search(page, { slip: slip.transRef! })
    assert.deepEqual(await listed(page), [platformOrderId])
    await search(page, { status: 'unsettled_paid' })
    assert.deepEqual(await listed(page), [platformOrderId])
    await Promise.all([
      page.waitForNavigation(),
      page.click(`#order-${platformOrderId} td:first-child a`),
    ])

    assert.include(await page.locator('#order-status').innerText(), 'unsettled_paid')
    assert.equal((await page.locator('#field-transfer_amount').innerText()).trim(), '250.00')
    const timeline = await page.locator('#order-timeline tbody').innerText()
    assert.include(timeline, 'created → open')
    assert.include(timeline, `slip ${slip.id} uploaded`)
    assert.include(timeline, 'open → unsettled_paid')
    assert.include(timeline, 'statement line')
    const ledger = await page.locator('#order-ledger').innerText()
    assert.include(ledger, 'payment_paid')
    assert.include(ledger, `${shop.merchantId} · unsettled`)
    assert.include(ledger, 'gateway · deposit_clearing')
    assert.include(ledger, '-250.00')
    const line = await page.locator('#order-statement-line').innerText()
    assert.include(line, 'credit 250.00 THB')
    assert.include(line, 'matched')
    assert.include(line, account.accountNo)

    // The slip image, beside the order, served only to a signed-in operator.
    const img = page.locator(`#slip-image-${slip.id}`)
    await img.scrollIntoViewIfNeeded()
    assert.isAbove(
      await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
      100
    )
    const fetched = await page.request.get(adminUrl(`/slips/${slip.id}/image`))
    assert.equal(fetched.status(), 200)
    assert.equal(fetched.headers()['content-type'], 'image/png')
    assert.equal(fetched.headers()['cache-control'], 'private, no-store')
    assert.isTrue(Buffer.from(await fetched.body()).equals(image))
    const stranger = await newContext(LAPTOP)
    contexts.push(stranger)
    const anonymous = await stranger.request.get(adminUrl(`/slips/${slip.id}/image`), {
      maxRedirects: 0,
    })
    assert.equal(anonymous.status(), 302)
    assert.include(anonymous.headers().location, '/admin/login')
    const slipCard = await page.locator(`#slip-${slip.id}`).innerText()
    assert.include(slipCard, slip.verificationMsg)
    assert.include(slipCard, slip.sha256)
    assert.include(slipCard, 'Forensics')

    // Callbacks: the PAID row and its attempt (status, latency, answer).
    const attempts = page.locator('.callback-attempts tr.attempt')
    assert.equal(await attempts.count(), 1)
    assert.include(await attempts.first().innerText(), '200')
    assert.include(await attempts.first().innerText(), 'ms')
    assert.include(await page.locator('.order-callback').innerText(), 'PAID')

    // Resend: a new series, delivered again, audited with the operator.
    await Promise.all([page.waitForNavigation(), page.click('#resend-callback')])
    assert.include(await page.locator('.flash.success').innerText(), 'PAID (series 1)')
    assert.isTrue(
      await until(
        async () => (await CallbackAttempt.query().where('series', 1)).length === 1,
        15_000
      ),
      'the resent callback was attempted'
    )
    await page.reload()
    assert.equal(await page.locator('.callback-attempts tr.attempt[data-series="1"]').count(), 1)
    assert.lengthOf(receiver.calls, 2)
    const resend = await db.from('audit_logs').where('action', 'callback.resend').firstOrFail()
    assert.equal(resend.actor, 'operator:ops@example.com')
    assert.equal(resend.subject_id, platformOrderId)

    // A viewer sees the page without the button, and a direct POST is refused.
    const viewer = await signIn('viewer@example.com', 'viewer')
    await viewer.goto(adminUrl(`/orders/${platformOrderId}`))
    assert.include(await viewer.locator('#order-timeline').innerText(), 'open → unsettled_paid')
    assert.equal(await viewer.locator('#resend-callback').count(), 0)
    const forbidden = await viewer.request.post(
      adminUrl(`/orders/${platformOrderId}/resend-callback`),
      { form: { _csrf: (await csrfToken(viewer))! }, maxRedirects: 0 }
    )
    assert.equal(forbidden.status(), 403)
    assert.lengthOf(await db.from('audit_logs').where('action', 'callback.resend'), 1)
    const outbox = await db.from('callback_outbox').firstOrFail()
    assert.equal(outbox.series, 1)

    // An unknown order is a plain 404 page.
    const unknown = platformOrderId.slice(0, 23) + (platformOrderId.endsWith('Z') ? 'Y' : 'Z')
    const missing = await viewer.goto(adminUrl(`/orders/${unknown}`))
    assert.equal(missing!.status(), 404)
  })
})
