import type { Page } from 'playwright-core'
import { Secret, TOTP } from 'otpauth'
import type { Actor } from '#core/actor'
import { createOperator as createOperatorAction } from '#operators/actions/create_operator'
import { testServers } from '#tests/helpers/servers'
import { newContext } from '#tests/helpers/browser'
import { setOperatorPassword } from '#operators/actions/set_operator_password'

/** A laptop-sized window for the back-office. */
export const LAPTOP = {
  viewport: { width: 1280, height: 860 },
  deviceScaleFactor: 1,
  isMobile: false,
  hasTouch: false,
  locale: 'en-GB',
}

export function adminUrl(path = '') {
  return `${testServers.httpsUrl}/admin${path}`
}

/** The password the tests' operators choose. */
export const PASSWORD = 'correct horse battery staple'

/**
 * Who creates the tests' operators: the test setup, neither the back-office
 * (which would only open an approval request) nor the server's shell (each
 * account would be recorded as a break-glass use and notified to every
 * admin, on every test's dashboard). tests/functional/operators.spec.ts and
 * tests/functional/operators_four_eyes.spec.ts run the command and the
 * back-office themselves.
 */
export const SETUP_ACTOR: Actor = { name: 'setup:tests' }

/**
 * Creates an operator with the action `operator:create` runs (a process per
 * operator would cost the suite minutes). Returns the one-time enrolment
 * link, pointed at the test server.
 */
export async function createOperator(email: string, role: 'admin' | 'operator' | 'viewer') {
  const { link } = await createOperatorAction({ email, role }, SETUP_ACTOR)
  if (!link) throw new Error(`operator ${email} was not created at once`)
  return testLink(link.url)
}

/** An enrolment link (as printed or mailed) pointed at the test server. */
export function testLink(url: string) {
  return adminUrl(new URL(url).pathname.replace(/^\/admin/, ''))
}

/** An operator whose password is set (through their link, without a browser). */
export async function createOperatorWithPassword(
  email: string,
  role: 'admin' | 'operator' | 'viewer',
  password = PASSWORD
) {
  const link = await createOperator(email, role)
  await setOperatorPassword(
    { token: link.split('/').pop(), password, password_confirmation: password },
    { ip: '127.0.0.1' }
  )
  return password
}

/** The enrolment link's page: chooses the password; lands on the TOTP enrolment page. */
export async function choosePassword(page: Page, link: string, password = PASSWORD) {
  await page.goto(link)
  await page.fill('#field-password', password)
  await page.fill('#field-password_confirmation', password)
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
}

export function totpFor(secret: string, offsetSteps = 0) {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 })
  return totp.generate({ timestamp: Date.now() + offsetSteps * 30_000 })
}

/** Password step; lands on the enrolment page or the code page. */
export async function submitPassword(page: Page, email: string, password: string) {
  await page.goto(adminUrl('/login'))
  await page.fill('#field-email', email)
  await page.fill('#field-password', password)
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
}

/**
 * A new operator's first visit: their enrolment link (password), TOTP
 * enrolment with the key the page shows, recovery codes. Returns the TOTP
 * secret and the recovery codes.
 */
export async function enrolThroughLink(page: Page, link: string, password = PASSWORD) {
  await choosePassword(page, link, password)
  const secret = (await page.locator('#totp-secret').innerText()).trim()
  await page.fill('#field-code', totpFor(secret))
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
  const codes = (await page.locator('#recovery-codes li').allInnerTexts()).map((code) =>
    code.trim()
  )
  await Promise.all([page.waitForNavigation(), page.click('text=I have saved them')])
  return { secret, codes }
}

/** A browser context with a signed-in operator of the given role. */
export async function signedInAs(email: string, role: 'admin' | 'operator' | 'viewer') {
  const link = await createOperator(email, role)
  const context = await newContext(LAPTOP)
  const page = await context.newPage()
  const enrolment = await enrolThroughLink(page, link)
  return { context, page, password: PASSWORD, ...enrolment }
}

/** The CSRF token of the page's first form. */
export async function csrfToken(page: Page) {
  return page.locator('input[name=_csrf]').first().getAttribute('value')
}
