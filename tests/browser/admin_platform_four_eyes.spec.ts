import { test } from '@japa/runner'
import type { BrowserContext, Page } from 'playwright-core'
import Platform from '#merchants/models/platform'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { cliActor } from '#core/actor'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import { createDepositMerchant, resetDatabase } from '#tests/helpers/merchants'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

const threshold = async () => (await Platform.findByOrFail('code', 'test')).fourEyesThreshold

/**
 * The platform page's four-eyes threshold and the requests waiting on the
 * platform, as an admin, a second admin, an operator and a viewer see them.
 */
test.group('back-office platform four eyes (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(async () => {
    await resetDatabase()
    await createDepositMerchant()
  })
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('an admin sets and lowers the threshold at once; raising it waits for a second admin, who approves it on the platform page', async ({
    assert,
  }) => {
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    const page = admin.page
    await page.goto(adminUrl('/platforms/test'))
    assert.equal(await page.locator('#four-eyes-threshold').innerText(), 'not required')

    // A bad amount: refused beside the field, what was typed kept.
    await page.fill('#four-eyes-form #field-four_eyes_threshold', 'fifty')
    await submit(page, '#four-eyes-form')
    assert.include(await page.locator('#error-four_eyes_threshold').innerText(), 'THB amount')
    assert.equal(await page.inputValue('#four-eyes-form #field-four_eyes_threshold'), 'fifty')
    assert.isNull(await threshold())

    await page.fill('#four-eyes-form #field-four_eyes_threshold', '50,000.00')
    await page.fill('#four-eyes-form #field-comment', 'big payments need two')
    await submit(page, '#four-eyes-form')
    assert.equal(await page.locator('#four-eyes-threshold').innerText(), '50,000.00 THB')
    assert.equal(await threshold(), 50_000_00)

    await page.fill('#four-eyes-form #field-four_eyes_threshold', '20000')
    await submit(page, '#four-eyes-form')
    assert.equal(await page.locator('#four-eyes-threshold').innerText(), '20,000.00 THB')

    // Removing it: a request for a second admin; nothing changes yet.
    await page.fill('#four-eyes-form #field-four_eyes_threshold', '')
    await submit(page, '#four-eyes-form')
    assert.include(await page.locator('.flash.success').innerText(), "second admin's approval")
    assert.equal(await threshold(), 20_000_00)
    const request = await ApprovalRequest.findByOrFail('kind', 'four_eyes_threshold')
    const card = page.locator(`#platform-request-${request.id}`)
    assert.include(await card.innerText(), 'set the four-eyes threshold of platform test to none')
    assert.include(await card.locator('.requested-by').innerText(), 'admin@example.com')
    assert.equal(await card.locator('a[href="/admin/review/approvals"]').count(), 1)
    // Their own request: no Approve, only Withdraw.
    assert.equal(await page.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await page.locator(`#reject-request-${request.id}`).innerText(), 'Withdraw')
    await screenshot(page, 'platform-four-eyes')

    const second = await signedInAs('second@example.com', 'admin')
    contexts.push(second.context)
    await second.page.goto(adminUrl('/platforms/test'))
    await screenshot(second.page, 'platform-pending-second-admin')
    await second.page.fill(`#approve-form-${request.id} input[name=comment]`, 'agreed by phone')
    await submit(second.page, `#approve-form-${request.id}`)
    assert.match(second.page.url(), /\/admin\/platforms\/test$/)
    assert.include(await second.page.locator('.flash.success').innerText(), 'approved')
    assert.equal(await second.page.locator('#four-eyes-threshold').innerText(), 'not required')
    assert.equal(await second.page.locator('#platform-pending').count(), 0)
    assert.isNull(await threshold())
  })

  test('an operator and a viewer see the threshold and the pending request, without forms or buttons; the server refuses them', async ({
    assert,
  }) => {
    await configurePlatform({ code: 'test', four_eyes_threshold: '1000.00' }, cliActor())
    await configurePlatform({ code: 'test', deposit_enabled: 'off' }, cliActor())
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    await admin.page.goto(adminUrl('/platforms/test'))
    await admin.page.check('#killswitch-form #field-confirm')
    await submit(admin.page, '#killswitch-form')
    const request = await ApprovalRequest.findByOrFail('kind', 'enable_deposits')

    for (const role of ['operator', 'viewer'] as const) {
      const who = await signedInAs(`${role}@example.com`, role)
      contexts.push(who.context)
      await who.page.goto(adminUrl('/platforms/test'))
      assert.equal(await who.page.locator('#four-eyes-threshold').innerText(), '1,000.00 THB')
      assert.equal(await who.page.locator('#four-eyes-form').count(), 0)
      const card = who.page.locator(`#platform-request-${request.id}`)
      assert.include(await card.innerText(), 'switch deposits of platform test back on')
      assert.equal(await card.locator('form').count(), 0, `${role}: no Approve or Reject`)
      if (role === 'viewer') await screenshot(who.page, 'platform-pending-viewer')

      const response = await who.page.request.post(adminUrl('/platforms/test/four-eyes'), {
        form: { _csrf: (await csrfToken(who.page))!, four_eyes_threshold: '' },
        maxRedirects: 0,
      })
      assert.equal(response.status(), 403, role)
    }
    // The approvals queue: the operator sees no Approve or Reject for this admin-only request.
    const operator = contexts.at(-2)!.pages()[0]
    await operator.goto(adminUrl('/review/approvals'))
    assert.equal(await operator.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await operator.locator(`#reject-request-${request.id}`).count(), 0)

    // Without the CSRF token the admin's own form changes nothing.
    const forged = await admin.page.request.post(adminUrl('/platforms/test/four-eyes'), {
      form: { four_eyes_threshold: '5.00' },
      maxRedirects: 0,
    })
    assert.equal(forged.status(), 302)
    assert.equal(await threshold(), 1000_00)
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'pending')
  })
})
