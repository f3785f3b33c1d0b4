import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import Platform from '#merchants/models/platform'
import ApprovalRequest from '#approvals/models/approval_request'
import { approveRequest } from '#approvals/actions/approve_request'
import { closeBrowser } from '#tests/helpers/browser'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'
import { operatorActor } from '#tests/helpers/decisions'

const ORDER = {
  amount: '100.00',
  bank: 'KBANK',
  account_name: 'Somchai Jaidee',
  account_no: '1234567890',
}

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

/**
 * Configuration in the back-office, in headless Chromium, checked where it
 * matters: on the merchant API and in the audit log.
 */
test.group('back-office configuration (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(90_000)

  test('the deposit killswitch toggled in the panel: create-flex answers 503 killswitch_off, and back', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount({ channel: 'qr' })
    const platform = await Platform.findOrFail(who.merchant.platformId)
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    const page = admin.page

    await page.goto(adminUrl(`/platforms/${platform.code}`))
    assert.equal(await page.locator('#deposits-state').innerText(), 'on')

    // Unconfirmed: refused beside the checkbox, nothing changes.
    await submit(page, '#killswitch-form')
    assert.include(await page.locator('#error-confirm').innerText(), 'confirm')
    assert.isTrue((await platform.refresh()).depositEnabled)

    await page.check('#killswitch-form #field-confirm')
    await page.fill('#killswitch-form #field-comment', 'bank maintenance')
    await submit(page, '#killswitch-form')
    assert.equal(await page.locator('#deposits-state').innerText(), 'off')

    const refused = await signedPost(
      '/payment/create-flex',
      who,
      authBody(who, { ...ORDER, merchant_order_id: 'KS1' })
    )
    assertError(assert, refused, 503, 'service-unavailable')
    assert.deepEqual(refused.json.data, { code: 'killswitch_off' })

    // Back on needs a second admin: the switch waits as an approval request.
    await page.check('#killswitch-form #field-confirm')
    await submit(page, '#killswitch-form')
    assert.equal(await page.locator('#deposits-state').innerText(), 'off')
    assert.include(await page.locator('.flash.success').innerText(), "second admin's approval")
    const request = await ApprovalRequest.findByOrFail('kind', 'enable_deposits')
    const second = await operatorActor('second-admin@example.com', 'admin')
    await approveRequest({ approval_request_id: request.id }, second.actor)
    await page.goto(adminUrl(`/platforms/${platform.code}`))
    assert.equal(await page.locator('#deposits-state').innerText(), 'on')
    const accepted = await signedPost(
      '/payment/create-flex',
      who,
      authBody(who, { ...ORDER, merchant_order_id: 'KS2' })
    )
    assert.equal(accepted.status, 200, accepted.text)

    // Both switches in the audit log, with the operator, before → after and the reason
    // (back on: by the approving admin).
    const rows = await db
      .from('audit_logs')
      .where('action', 'platform.configure')
      .orderBy('id')
      .select('actor', 'before_values', 'after_values', 'comment', 'ip')
    assert.lengthOf(rows, 2)
    const json = (value: any) => (typeof value === 'string' ? JSON.parse(value) : value)
    assert.equal(rows[0].actor, 'operator:admin@example.com')
    assert.deepEqual(json(rows[0].before_values), { deposit_enabled: true })
    assert.deepEqual(json(rows[0].after_values), { deposit_enabled: false })
    assert.equal(rows[0].comment, 'bank maintenance')
    assert.isNotNull(rows[0].ip)
    assert.equal(rows[1].actor, 'operator:second-admin@example.com')
    assert.deepEqual(json(rows[1].after_values), { deposit_enabled: true })
    await page.goto(adminUrl(`/audit?target=platform:${platform.code}&action=platform.configure`))
    assert.equal(await page.locator('#audit-table tbody tr').count(), 2)
  })

  test('platform settings: errors beside their fields keep what was typed; a valid change is saved', async ({
    assert,
  }) => {
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    const page = admin.page
    await page.goto(adminUrl('/platforms/new'))
    await page.fill('#field-code', 'Bad Code')
    await page.fill('#field-payment_page_domain', 'not a domain!')
    await submit(page, '#platform-new-form')
    assert.include(await page.locator('#error-code').innerText(), 'lowercase')
    assert.include(await page.locator('#error-payment_page_domain').innerText(), 'host name')
    assert.equal(await page.inputValue('#field-payment_page_domain'), 'not a domain!')

    await page.fill('#field-code', 'acme')
    await page.fill('#field-payment_page_domain', 'pay.acme.example')
    await submit(page, '#platform-new-form')
    assert.match(page.url(), /\/admin\/platforms\/acme$/)
    await page.fill('#platform-form #field-deposit_hours', '25:00-02:00')
    await submit(page, '#platform-form')
    assert.include(await page.locator('#error-deposit_hours').innerText(), 'HH:mm-HH:mm')
    await page.fill('#platform-form #field-deposit_hours', '22:00-06:00')
    await submit(page, '#platform-form')
    assert.include(await page.locator('.flash.success').innerText(), 'saved')
    const platform = await Platform.findByOrFail('code', 'acme')
    assert.equal(platform.depositOpenFrom, '22:00')
    assert.equal(platform.depositOpenTo, '06:00')
  })
})
