import { test } from '@japa/runner'
import type { BrowserContext, Page } from 'playwright-core'
import ApprovalRequest from '#approvals/models/approval_request'
import Platform from '#merchants/models/platform'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'
import { ace } from '#tests/helpers/ace'

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

let orderNumber = 0
/** What a merchant's payment create gets: 200, or the killswitch's 503. */
async function createPayment(who: TestMerchant) {
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `KS${++orderNumber}`,
      amount: '100.00',
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '123-4-56789-0',
      notify_url: 'https://merchant.example.test/callback',
    })
  )
  return { status: response.status, body: response.json }
}

async function switchOff(page: Page) {
  await page.goto(adminUrl('/platforms/test'))
  await page.check('#killswitch-form #field-confirm')
  await page.fill('#killswitch-form #field-comment', 'bank reports duplicate credits')
  await submit(page, '#killswitch-form')
}

async function askToSwitchOn(page: Page) {
  await page.check('#killswitch-form #field-confirm')
  await page.fill('#killswitch-form #field-comment', 'bank confirmed the fix')
  await submit(page, '#killswitch-form')
  return ApprovalRequest.findByOrFail('kind', 'enable_deposits')
}

/**
 * The killswitch round trip as an office lives it: off at once, back on
 * with a second admin, or, where there is only one admin, from the server's
 * command line, which closes the waiting request.
 */
test.group('back-office killswitch round trip (browser)', (group) => {
  const contexts: BrowserContext[] = []
  let merchant: TestMerchant
  group.each.setup(async () => {
    await resetDatabase()
    merchant = await createDepositMerchant()
    await createDepositAccount()
  })
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('with two admins: off at once, back on when the second admin approves', async ({
    assert,
  }) => {
    assert.equal((await createPayment(merchant)).status, 200)
    const first = await signedInAs('admin@example.com', 'admin')
    contexts.push(first.context)
    await switchOff(first.page)
    const off = await createPayment(merchant)
    assert.equal(off.status, 503)
    assert.equal(off.body.data.code, 'killswitch_off')

    const request = await askToSwitchOn(first.page)
    assert.include(
      await first.page.locator('.flash.success').innerText(),
      "second admin's approval"
    )
    assert.include(
      await first.page.locator(`#platform-request-${request.id}`).innerText(),
      'switch deposits of platform test back on'
    )
    assert.equal(await first.page.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal((await createPayment(merchant)).status, 503, 'still off while it waits')

    // An operator sees the request but cannot decide it.
    const operator = await signedInAs('operator@example.com', 'operator')
    contexts.push(operator.context)
    await operator.page.goto(adminUrl('/platforms/test'))
    assert.equal(
      await operator.page.locator(`#platform-request-${request.id} form`).count(),
      0,
      'no Approve or Reject for an operator'
    )

    const second = await signedInAs('second@example.com', 'admin')
    contexts.push(second.context)
    await second.page.goto(adminUrl('/platforms/test'))
    await second.page.fill(
      `#approve-form-${request.id} input[name=comment]`,
      'confirmed with the bank'
    )
    await submit(second.page, `#approve-form-${request.id}`)
    assert.include(await second.page.locator('.flash.success').innerText(), 'approved')
    assert.equal(await second.page.locator('#platform-pending').count(), 0)
    assert.isTrue((await Platform.findByOrFail('code', 'test')).depositEnabled)
    assert.equal((await createPayment(merchant)).status, 200)
  })

  test('with one admin: the command-line break-glass switches deposits on and closes the waiting request, and the page says so', async ({
    assert,
  }) => {
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    await switchOff(admin.page)
    const request = await askToSwitchOn(admin.page)
    assert.equal((await createPayment(merchant)).status, 503)

    const result = await ace(
      'platform:configure',
      'test',
      '--deposits=on',
      '--comment=only admin on shift; bank confirmed the fix'
    )
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, `#${request.id}`)
    assert.equal((await createPayment(merchant)).status, 200)

    await admin.page.goto(adminUrl('/platforms/test'))
    assert.equal(await admin.page.locator('#platform-pending').count(), 0, 'nothing left pending')
    assert.include(await admin.page.locator('#killswitch-form').innerText(), 'Switch deposits off')

    // The audit log tells who closed the request and why.
    await admin.page.goto(adminUrl('/audit?action=approval.supersede'))
    const audit = await admin.page.locator('main').innerText()
    assert.include(audit, 'approval.supersede')
    assert.match(audit, /cli:/)
    await screenshot(admin.page, 'audit-break-glass')
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'superseded')
  })
})
