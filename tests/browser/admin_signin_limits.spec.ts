import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext } from 'playwright-core'
import Operator from '#operators/models/operator'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import { resetDatabase } from '#tests/helpers/merchants'
import {
  adminUrl,
  createOperatorWithPassword,
  csrfToken,
  LAPTOP,
  signedInAs,
  submitPassword,
  totpFor,
} from '#tests/helpers/admin'

/**
 * Sign-in limits in headless Chromium, every browser on one address (the
 * test machine's) like an office: one operator's failures lock that operator
 * alone; the others sign in; an admin sees the lock on the Operators page
 * and unlocks it; nobody else can.
 */
test.group('back-office sign-in limits (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  test('one operator locked after failures; a viewer on the same address signs in; the admin unlocks; others cannot', async ({
    assert,
  }) => {
    const admin = await signedInAs('admin@example.com', 'admin')
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    const colleague = await signedInAs('colleague@example.com', 'operator')
    contexts.push(admin.context, viewer.context, colleague.context)
    const password = await createOperatorWithPassword('boon@example.com', 'operator')
    const boon = await Operator.findByOrFail('email', 'boon@example.com')

    // Boon mistypes five times, then even the right password is refused: Boon is locked.
    const boonContext = await newContext(LAPTOP)
    contexts.push(boonContext)
    const page = await boonContext.newPage()
    for (let attempt = 0; attempt < 5; attempt++) {
      await submitPassword(page, 'boon@example.com', `wrong-${attempt}`)
      assert.include(await page.locator('.flash.error').innerText(), 'wrong')
    }
    await submitPassword(page, 'boon@example.com', password)
    assert.match(page.url(), /\/admin\/login$/)
    const locked = await page.locator('.flash.error').innerText()
    assert.include(locked, 'Too many failed sign-ins for this account')
    assert.include(locked, 'ask an admin to unlock it')

    // The viewer, from the same address, signs in: a wrong code first, then the right one.
    const viewerPage = viewer.page
    await Promise.all([viewerPage.waitForNavigation(), viewerPage.click('header.top button')])
    await submitPassword(viewerPage, 'viewer@example.com', viewer.password)
    assert.match(viewerPage.url(), /\/admin\/login\/code$/)
    await viewerPage.fill('#field-code', '000000')
    await Promise.all([viewerPage.waitForNavigation(), viewerPage.click('button[type=submit]')])
    assert.include(await viewerPage.locator('#error-code').innerText(), 'Wrong or expired code')
    await viewerPage.fill('#field-code', totpFor(viewer.secret, 1))
    await Promise.all([viewerPage.waitForNavigation(), viewerPage.click('button[type=submit]')])
    assert.equal(await viewerPage.locator('h1').innerText(), 'Dashboard')

    // Neither the viewer nor an operator sees the Operators page, nor can they unlock by a forged POST.
    for (const other of [viewer, colleague]) {
      const shown = await other.page.goto(adminUrl('/operators'))
      assert.equal(shown!.status(), 403)
      assert.equal(await other.page.locator(`#operator-${boon.id}-unlock`).count(), 0)
      await other.page.goto(adminUrl('/account'))
      const token = await csrfToken(other.page)
      const forged = await other.page.request.post(adminUrl(`/operators/${boon.id}/unlock`), {
        form: { _csrf: token! },
        maxRedirects: 0,
      })
      assert.equal(forged.status(), 403)
    }
    assert.lengthOf(await db.from('audit_logs').where('action', 'operator.unlock'), 0)
    await submitPassword(page, 'boon@example.com', password)
    assert.include(await page.locator('.flash.error').innerText(), 'Too many failed sign-ins')

    // The admin sees the lock on the Operators page and unlocks Boon.
    await admin.page.goto(adminUrl('/operators'))
    const row = admin.page.locator(`#operator-${boon.id}`)
    assert.include(await row.locator(`#operator-${boon.id}-locked`).innerText(), 'locked')
    assert.equal(await admin.page.locator('[id$="-locked"]').count(), 1)
    await screenshot(admin.page, 'admin-operators-locked')
    await Promise.all([
      admin.page.waitForNavigation(),
      admin.page.click(`#operator-${boon.id}-unlock button`),
    ])
    assert.include(
      await admin.page.locator('.flash.success').innerText(),
      'boon@example.com unlocked'
    )
    assert.equal(await admin.page.locator(`#operator-${boon.id}-locked`).count(), 0)
    const audit = await db.from('audit_logs').where('action', 'operator.unlock')
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].actor, 'operator:admin@example.com')
    assert.equal(audit[0].subject_id, 'boon@example.com')

    // Boon signs in now (no second factor yet: the enrolment page).
    await submitPassword(page, 'boon@example.com', password)
    assert.match(page.url(), /\/admin\/enrol$/)
  })

  test('an unlock form without the CSRF token changes nothing', async ({ assert }) => {
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    const password = await createOperatorWithPassword('boon@example.com', 'operator')
    const boon = await Operator.findByOrFail('email', 'boon@example.com')
    const boonContext = await newContext(LAPTOP)
    contexts.push(boonContext)
    const page = await boonContext.newPage()
    for (let attempt = 0; attempt < 5; attempt++) {
      await submitPassword(page, 'boon@example.com', `wrong-${attempt}`)
    }
    const response = await admin.page.request.post(adminUrl(`/operators/${boon.id}/unlock`), {
      form: {},
      maxRedirects: 0,
    })
    assert.notEqual(response.status(), 200)
    assert.lengthOf(await db.from('audit_logs').where('action', 'operator.unlock'), 0)
    await submitPassword(page, 'boon@example.com', password)
    assert.include(await page.locator('.flash.error').innerText(), 'Too many failed sign-ins')
  })
})
