import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext } from 'playwright-core'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import { resetDatabase } from '#tests/helpers/merchants'
import {
  adminUrl,
  choosePassword,
  createOperator,
  createOperatorWithPassword,
  csrfToken,
  enrolThroughLink,
  LAPTOP,
  PASSWORD,
  signedInAs,
  submitPassword,
  testLink,
  totpFor,
} from '#tests/helpers/admin'
import { ace } from '#tests/helpers/ace'
import { mailsTo, waitForMail } from '#tests/helpers/mailbox'

const LINK = /https?:\/\/[^\s]+\/admin\/welcome\/[A-Za-z0-9]{43}/

async function auditActions() {
  return (await db.from('audit_logs').orderBy('id').select('action', 'actor')).map(
    (row) => `${row.action} ${row.actor}`
  )
}

/**
 * Operator access to the back-office in headless Chromium: the first admin
 * from the command, TOTP enrolment and sign-in, the login rate limit, roles
 * checked on the server, logout everywhere; each step in the audit log.
 */
test.group('back-office access (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(90_000)

  test('first admin from the command: enrolment link, TOTP enrolment, then sign-in with a code; a used code is refused', async ({
    assert,
  }) => {
    // The command as typed on the server: beyond four eyes, so a break-glass use.
    const created = await ace('operator:create', '--email=first@example.com', '--role=admin')
    assert.equal(created.code, 0, created.output)
    assert.include(created.output, 'break-glass')
    const link = testLink(LINK.exec(created.stdout)![0])
    const password = PASSWORD
    const context = await newContext(LAPTOP)
    contexts.push(context)
    const page = await context.newPage()

    await page.goto(adminUrl())
    assert.match(page.url(), /\/admin\/login$/)
    // No password yet: nothing signs in until the link is used.
    await submitPassword(page, 'first@example.com', '')
    assert.match(page.url(), /\/admin\/login$/)

    // The link: a short password and a mismatch are refused beside their fields.
    await choosePassword(page, link, 'short')
    assert.include(await page.locator('#error-password').innerText(), 'at least 12 characters')
    await page.fill('#field-password', password)
    await page.fill('#field-password_confirmation', `${password}!`)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    assert.include(await page.locator('#error-password_confirmation').innerText(), 'differ')
    await screenshot(page, 'admin-welcome')
    const { secret, codes } = await enrolThroughLink(page, link, password)
    assert.lengthOf(codes, 10)
    assert.equal(await page.locator('h1').innerText(), 'Dashboard')
    await screenshot(page, 'admin-dashboard')

    // The link worked once.
    const again = await page.goto(link)
    assert.equal(again!.status(), 404)
    assert.include(await page.locator('#welcome-invalid').innerText(), 'not valid')
    await page.goto(adminUrl())
    assert.include(await page.locator('header.top').innerText(), 'first@example.com')

    // The session cookie: Secure, HttpOnly, SameSite=Strict, only for /admin.
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'gateway-admin-session')
    assert.isTrue(cookie.secure)
    assert.isTrue(cookie.httpOnly)
    assert.equal(cookie.sameSite, 'Strict')
    assert.equal(cookie.path, '/admin')

    await Promise.all([page.waitForNavigation(), page.click('header.top button')])
    assert.match(page.url(), /\/admin\/login$/)

    // Second sign-in: password, then a code of the next time step.
    await submitPassword(page, 'first@example.com', password)
    assert.match(page.url(), /\/admin\/login\/code$/)
    const code = totpFor(secret, 1)
    await page.fill('#field-code', code)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    assert.equal(await page.locator('h1').innerText(), 'Dashboard')

    // The same code again (same time step) is refused, even with the right password.
    await Promise.all([page.waitForNavigation(), page.click('header.top button')])
    await submitPassword(page, 'first@example.com', password)
    await page.fill('#field-code', code)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    assert.match(page.url(), /\/admin\/login\/code$/)
    assert.include(await page.locator('#error-code').innerText(), 'already used')

    // A recovery code works once.
    await page.fill('#field-code', codes[0])
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    assert.equal(await page.locator('h1').innerText(), 'Dashboard')

    const actions = await auditActions()
    const shell = actions[0].split(' ')[1]
    assert.match(shell, /^cli:/)
    assert.includeMembers(actions, [
      `operator.create ${shell}`,
      `break_glass.use ${shell}`,
      'operator.totp_enrol operator:first@example.com',
      'operator.login operator:first@example.com',
      'operator.logout operator:first@example.com',
      'operator.login_failed login:first@example.com',
    ])
  })

  test('five failed sign-ins lock the account out with a clear message, the right password included', async ({
    assert,
  }) => {
    const password = await createOperatorWithPassword('locked@example.com', 'operator')
    const context = await newContext(LAPTOP)
    contexts.push(context)
    const page = await context.newPage()
    for (let attempt = 0; attempt < 5; attempt++) {
      await submitPassword(page, 'locked@example.com', `wrong-${attempt}`)
      assert.include(await page.locator('.flash.error').innerText(), 'wrong')
    }
    await submitPassword(page, 'locked@example.com', password)
    assert.match(page.url(), /\/admin\/login$/)
    assert.include(
      await page.locator('.flash.error').innerText(),
      'Too many failed sign-ins for this account'
    )
    const failed = await db.from('audit_logs').where('action', 'operator.login_failed')
    assert.lengthOf(failed, 6)
    const details = failed[5].details
    assert.equal((typeof details === 'string' ? JSON.parse(details) : details).step, 'rate_limited')
  })

  test('a viewer reads but its direct POST is refused on the server (403), not merely hidden', async ({
    assert,
  }) => {
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    await viewer.page.goto(adminUrl('/audit'))
    assert.equal(await viewer.page.locator('h1').innerText(), 'Audit log')

    // A POST to an admin-only form, with a valid CSRF token of the viewer's own session.
    const token = await csrfToken(viewer.page)
    const response = await viewer.page.request.post(adminUrl('/platforms'), {
      form: { _csrf: token!, code: 'sneaky', name: 'Sneaky' },
      maxRedirects: 0,
    })
    assert.equal(response.status(), 403)
    assert.include(await response.text(), 'Not allowed')
    assert.lengthOf(await db.from('platforms').where('code', 'sneaky'), 0)
  })

  test('a form without the CSRF token changes nothing', async ({ assert }) => {
    const admin = await signedInAs('csrf@example.com', 'admin')
    contexts.push(admin.context)
    const response = await admin.page.request.post(adminUrl('/logout-everywhere'), {
      form: {},
      maxRedirects: 0,
    })
    assert.equal(response.status(), 302)
    // Still signed in: the POST was refused.
    await admin.page.goto(adminUrl('/account'))
    assert.equal(await admin.page.locator('h1').innerText(), 'Your account')
  })

  test('log out everywhere ends the sessions of every browser', async ({ assert }) => {
    const link = await createOperator('twice@example.com', 'admin')
    const password = PASSWORD
    const first = await newContext(LAPTOP)
    const second = await newContext(LAPTOP)
    contexts.push(first, second)
    const pageOne = await first.newPage()
    const pageTwo = await second.newPage()
    const { secret } = await enrolThroughLink(pageOne, link)
    await submitPassword(pageTwo, 'twice@example.com', password)
    await pageTwo.fill('#field-code', totpFor(secret, 1))
    await Promise.all([pageTwo.waitForNavigation(), pageTwo.click('button[type=submit]')])
    assert.equal(await pageTwo.locator('h1').innerText(), 'Dashboard')

    await pageOne.goto(adminUrl('/account'))
    await Promise.all([pageOne.waitForNavigation(), pageOne.click('#logout-everywhere')])
    await pageTwo.goto(adminUrl('/audit'))
    assert.match(pageTwo.url(), /\/admin\/login$/)
    assert.include(await auditActions(), 'operator.logout_everywhere operator:twice@example.com')
  })

  test('an admin invites an operator in the panel; a second admin approves; the mailed link enrols them; disable ends their sessions', async ({
    assert,
  }) => {
    const admin = await signedInAs('boss@example.com', 'admin')
    const second = await signedInAs('second@example.com', 'admin')
    contexts.push(admin.context, second.context)
    const page = admin.page
    await page.goto(adminUrl('/operators'))
    await page.fill('#operator-new-form #field-email', 'not-an-email')
    await Promise.all([
      page.waitForNavigation(),
      page.click('#operator-new-form button[type=submit]'),
    ])
    assert.include(await page.locator('#error-email').innerText(), 'email must be an email address')
    assert.equal(await page.inputValue('#operator-new-form #field-email'), 'not-an-email')

    await page.fill('#operator-new-form #field-email', 'new@example.com')
    await page.selectOption('#operator-new-form #field-role', 'operator')
    await page.fill('#operator-new-form #field-comment', 'joins the night shift')
    await Promise.all([
      page.waitForNavigation(),
      page.click('#operator-new-form button[type=submit]'),
    ])
    // An operator decides on money: the account waits for a second admin, and no link is shown.
    const [request] = await db.from('approval_requests').where('target_id', 'new@example.com')
    assert.include(
      await page.locator('.flash.success').innerText(),
      `approval request #${request.id} opened: waits for a second admin`
    )
    assert.include(
      await page.locator(`#pending-request-${request.id}`).innerText(),
      'You asked for this request'
    )
    assert.equal(await page.locator(`#approve-request-${request.id}`).count(), 0)
    assert.notMatch(await page.content(), LINK)
    assert.lengthOf(await db.from('operators').where('email', 'new@example.com'), 0)

    // The second admin approves it on the same page.
    const since = mailsTo('new@example.com').length
    await second.page.goto(adminUrl('/operators'))
    await second.page.fill(`#approve-form-${request.id} input[name=comment]`, 'HR confirmed')
    await screenshot(second.page, 'operators')
    await Promise.all([
      second.page.waitForNavigation(),
      second.page.click(`#approve-request-${request.id}`),
    ])
    assert.include(await second.page.locator('.flash.success').innerText(), 'approved')
    assert.notMatch(await second.page.content(), LINK)
    const mail = await waitForMail(
      'new@example.com',
      (m) => LINK.test(m.text) && mailsTo('new@example.com').indexOf(m) >= since
    )
    const shown = testLink(LINK.exec(mail!.text)![0])

    const invited = await newContext(LAPTOP)
    contexts.push(invited)
    const newPage = await invited.newPage()
    await enrolThroughLink(newPage, shown)
    assert.equal(await newPage.locator('h1').innerText(), 'Dashboard')
    // An operator sees no Operators menu, and the page is refused.
    assert.equal(await newPage.locator('nav >> text=Operators').count(), 0)
    const refused = await newPage.goto(adminUrl('/operators'))
    assert.equal(refused!.status(), 403)

    const row = await db.from('operators').where('email', 'new@example.com').first()
    await page.goto(adminUrl('/operators'))
    await Promise.all([
      page.waitForNavigation(),
      page.click(`#operator-${row.id}-access button[type=submit]`),
    ])
    assert.include(await page.locator('.flash.success').innerText(), 'sessions ended')
    assert.include(await page.locator(`#operator-${row.id} .access`).innerText(), 'disabled')
    await newPage.goto(adminUrl('/audit'))
    assert.match(newPage.url(), /\/admin\/login$/)
    assert.include(await auditActions(), 'operator.update operator:boss@example.com')
  })

  test('unknown back-office pages are a plain 404 page', async ({ assert }) => {
    const context = await newContext(LAPTOP)
    contexts.push(context)
    const page = await context.newPage()
    const response = await page.goto(adminUrl('/no-such-page'))
    assert.equal(response!.status(), 404)
    assert.equal(await page.locator('h1').innerText(), 'Not found')
  })
})
