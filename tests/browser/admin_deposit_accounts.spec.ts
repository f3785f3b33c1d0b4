import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import DepositAccount from '#payments/models/deposit_account'
import ApprovalRequest from '#approvals/models/approval_request'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { GATEWAY_ZONE } from '#core/clock'
import { closeBrowser } from '#tests/helpers/browser'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

let orderSequence = 0

/** A QR payment create through the merchant API. */
function createPayment(who: TestMerchant, amount = '100.00') {
  orderSequence += 1
  return signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `DA${orderSequence}`,
      amount,
      bank: 'KBANK',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
    })
  )
}

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

async function screenshot(page: Page, name: string, width?: number) {
  if (!process.env.SCREENSHOTS) return
  const laptop = page.viewportSize()
  if (width) await page.setViewportSize({ width, height: 1100 })
  await page.screenshot({ path: `docs/screenshots/deposit-accounts-${name}.png`, fullPage: true })
  if (width && laptop) await page.setViewportSize(laptop)
}

/** "2026-11-23T01:30", what a datetime-local input holds, in Bangkok time. */
function bangkokInput(time: DateTime) {
  return time.setZone(GATEWAY_ZONE).toFormat("yyyy-LL-dd'T'HH:mm")
}

function json(value: unknown) {
  return typeof value === 'string' ? JSON.parse(value) : value
}

async function auditRows(action: string, target: string) {
  const [type, id] = target.split(':')
  return db
    .from('audit_logs')
    .where('action', action)
    .where('subject_type', type)
    .where('subject_id', id)
    .orderBy('id')
    .select('actor', 'before_values', 'after_values', 'comment', 'ip')
}

/** Rows the audit log screen shows for a target. */
async function auditScreenRows(page: Page, target: string) {
  await page.goto(adminUrl(`/audit?target=${target}`))
  return page.locator('#audit-table tbody tr').allInnerTexts()
}

/**
 * The deposit-account pool in the back-office, in headless Chromium, checked
 * where it matters: on the merchant API, in the database and in the audit log.
 */
test.group('back-office deposit-account pool (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  async function signedInAdmin(email = 'admin@example.com') {
    const admin = await signedInAs(email, 'admin')
    contexts.push(admin.context)
    return admin.page
  }

  test('sorted by usage: the account nearest a limit this Bangkok hour comes first, or last', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const busy = await createDepositAccount({ channel: 'qr', hourlyCountLimit: 4 })
    for (let i = 0; i < 2; i++) {
      const created = await createPayment(who)
      assert.equal(created.status, 200, created.text)
    }
    // Accounts made after the orders: no usage, one with a limit, one without.
    const idle = await createDepositAccount({ channel: 'qr', hourlyCountLimit: 4 })
    const unlimited = await createDepositAccount({ channel: 'qr' })
    const page = await signedInAdmin()
    const order = async (dir: 'asc' | 'desc') => {
      await page.goto(adminUrl(`/deposit-accounts?sort=usage&dir=${dir}`))
      return page.locator('tr[id^="account-"]').evaluateAll((rows) => rows.map((row) => row.id))
    }
    assert.deepEqual(await order('desc'), [
      `account-${busy.id}`,
      `account-${idle.id}`,
      `account-${unlimited.id}`,
    ])
    assert.deepEqual(await order('asc'), [
      `account-${idle.id}`,
      `account-${unlimited.id}`,
      `account-${busy.id}`,
    ])
    assert.equal(
      await page.locator(`#account-${busy.id} .usage-hour-count .figure`).innerText(),
      '2 / 4'
    )
    await screenshot(page, 'sorted-by-usage')
  })

  test("a deposit account's hourly limit edited, with usage shown", async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', dailyAmountLimit: 100_000_00 })
    for (let i = 0; i < 2; i++) {
      const created = await createPayment(who)
      assert.equal(created.status, 200, created.text)
    }
    const page = await signedInAdmin()

    // An invalid limit: refused beside the field, what was typed is kept, nothing changes.
    await page.goto(adminUrl(`/deposit-accounts/${account.id}`))
    await page.fill('#account-form #field-hourly_count_limit', '2.5')
    await page.fill('#account-form #field-comment', 'slow the account down')
    await submit(page, '#account-form')
    assert.include(
      await page.locator('#account-form #error-hourly_count_limit').innerText(),
      'hourly_count_limit must be a whole number'
    )
    assert.equal(await page.inputValue('#account-form #field-hourly_count_limit'), '2.5')
    assert.isNull((await account.refresh()).hourlyCountLimit)
    await screenshot(page, 'edit-error')

    await page.fill('#account-form #field-hourly_count_limit', '3')
    await submit(page, '#account-form')
    assert.include(await page.locator('.flash.success').innerText(), 'hourly_count_limit')
    assert.equal((await account.refresh()).hourlyCountLimit, 3)
    assert.include(await page.locator('#account-usage').innerText(), '2 / 3')

    // The list shows the usage beside each limit, a meter under each.
    await page.goto(adminUrl('/deposit-accounts'))
    const row = page.locator(`#account-${account.id}`)
    assert.equal(await row.locator('.usage-hour-count .figure').innerText(), '2 / 3')
    assert.equal(await row.locator('.usage-hour-count .meter:not(.high)').count(), 1)
    assert.equal(await row.locator('.usage-day-amount .figure').innerText(), '200.01 / 100,000.00')
    assert.equal(await row.locator('.usage-hour-amount .figure').innerText(), '—')
    assert.include(await row.locator('.usage-slots').innerText(), '2 of 1000 at 100.00')
    assert.include(await row.innerText(), '0812345678')

    const third = await createPayment(who)
    assert.equal(third.status, 200, third.text)
    await page.reload()
    assert.equal(await row.locator('.usage-hour-count .figure').innerText(), '3 / 3')
    assert.equal(await row.locator('.usage-hour-count .meter.high').count(), 1)
    assert.include(await row.locator('.status').innerText(), 'hourly cap reached')
    await screenshot(page, 'index')
    await screenshot(page, 'index-tablet', 820)

    // Over the new limit, the merchant API answers 429.
    assertError(assert, await createPayment(who), 429, 'channel-limit-reached')

    const rows = await auditRows('deposit_account.update', `deposit_account:${account.id}`)
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].actor, 'operator:admin@example.com')
    assert.deepEqual(json(rows[0].before_values), { hourly_count_limit: null })
    assert.deepEqual(json(rows[0].after_values), { hourly_count_limit: 3 })
    assert.equal(rows[0].comment, 'slow the account down')
    assert.isNotNull(rows[0].ip)
    const screenRows = await auditScreenRows(page, `deposit_account:${account.id}`)
    assert.lengthOf(screenRows, 1)
    assert.include(screenRows[0], 'deposit_account.update')
  })

  test('an account that reached its daily amount cap is shown out of selection for the day', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', dailyAmountLimit: 110_00 })
    assert.equal((await createPayment(who)).status, 200)
    const page = await signedInAdmin()
    await page.goto(adminUrl('/deposit-accounts?group=test-group&channel=qr&bank=KBANK&active=yes'))
    const row = page.locator(`#account-${account.id}`)
    assert.include(await row.locator('.status').innerText(), 'daily cap reached')
    assert.equal(await row.locator('.usage-day-amount .meter.high').count(), 1)
    assertError(assert, await createPayment(who), 429, 'channel-limit-reached')

    // Filters that leave it out.
    await page.goto(adminUrl('/deposit-accounts?channel=transfer'))
    assert.equal(await page.locator(`#account-${account.id}`).count(), 0)
  })

  test('a second account with the same PromptPay id is refused beside the field', async ({
    assert,
  }) => {
    const first = await createDepositAccount({ channel: 'qr', promptpayId: '0812345678' })
    const page = await signedInAdmin()
    await page.goto(adminUrl('/deposit-accounts/new'))
    await page.fill('#field-deposit_group', 'test-group')
    await page.selectOption('#field-channel', 'qr')
    await page.selectOption('#field-bank', 'SCB')
    await page.fill('#field-account_no', '987-6-54321-0')
    await page.fill('#field-account_name', 'Second account')
    await page.fill('#field-promptpay_id', '+66 81 234 5678')
    await page.fill('#field-hourly_count_limit', '30')
    await submit(page, '#account-new-form')
    const error = await page.locator('#error-promptpay_id').innerText()
    assert.include(error, 'already used by')
    assert.include(error, `deposit account ${first.id}`)
    assert.equal(await page.inputValue('#field-promptpay_id'), '+66 81 234 5678')
    assert.equal(await page.inputValue('#field-account_name'), 'Second account')
    assert.equal((await DepositAccount.all()).length, 1)
    await screenshot(page, 'new-error')

    // Accepted: an approval request, nothing in the pool yet; the form is empty again.
    await page.fill('#field-promptpay_id', '0899999999')
    await submit(page, '#account-new-form')
    const request = await ApprovalRequest.findByOrFail('action', 'deposit_account.create')
    assert.match(page.url(), /\/admin\/deposit-accounts\/new$/)
    assert.include(
      await page.locator('.flash.success').innerText(),
      `approval request #${request.id} opened: waits for a second admin`
    )
    assert.equal(await page.inputValue('#field-account_no'), '')
    assert.equal((await DepositAccount.all()).length, 1)

    // The pool lists it as waiting; its requester may only withdraw it.
    await page.goto(adminUrl('/deposit-accounts'))
    const card = page.locator(`#pending-additions #pending-request-${request.id}`)
    assert.include(await card.innerText(), 'add deposit account qr SCB 9876543210')
    assert.equal(await card.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await card.locator(`#reject-request-${request.id}`).innerText(), 'Withdraw')

    const second = await signedInAdmin('second@example.com')
    await second.goto(adminUrl('/deposit-accounts'))
    await second.fill(`#approve-form-${request.id} input[name=comment]`, 'contract seen')
    await submit(second, `#approve-form-${request.id}`)
    assert.include(await second.locator('.flash.success').innerText(), 'approved')
    assert.equal(await second.locator('#pending-additions').count(), 0)
    const created = await DepositAccount.query().whereNot('id', first.id).firstOrFail()
    assert.equal(created.promptpayId, '0899999999')
    assert.equal(created.accountNo, '9876543210')
    assert.equal(created.hourlyCountLimit, 30)
    assert.isTrue(created.active)
    await second.goto(adminUrl(`/deposit-accounts/${created.id}`))
    await screenshot(second, 'show')

    const rows = await auditRows('deposit_account.create', `deposit_account:${created.id}`)
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].actor, 'operator:second@example.com')
    assert.equal(json(rows[0].after_values).promptpay_id, '0899999999')
    assert.lengthOf(await auditScreenRows(second, `deposit_account:${created.id}`), 1)
  })

  test('deactivating an account, confirmed: payment creates answer 503 until it is back', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const page = await signedInAdmin()
    await page.goto(adminUrl(`/deposit-accounts/${account.id}`))
    assert.equal(await page.locator('#active-state').innerText(), 'active')

    // Unconfirmed: refused beside the box, nothing changes.
    await page.fill('#active-form #field-comment', 'bank asked us to stop')
    await submit(page, '#active-form')
    assert.include(await page.locator('#active-form #error-confirm').innerText(), 'confirm')
    assert.isTrue((await account.refresh()).active)

    await page.check('#active-form #field-confirm')
    await submit(page, '#active-form')
    assert.equal(await page.locator('#active-state').innerText(), 'inactive')
    assert.isFalse((await account.refresh()).active)
    assertError(assert, await createPayment(who), 503, 'service-unavailable')

    // Activating waits for a second admin: still inactive, still 503.
    await page.check('#active-form #field-confirm')
    await submit(page, '#active-form')
    const request = await ApprovalRequest.findByOrFail('action', 'deposit_account.update')
    assert.include(
      await page.locator('.flash.success').innerText(),
      `approval request #${request.id} opened: waits for a second admin`
    )
    assert.equal(await page.locator('#active-state').innerText(), 'inactive')
    assertError(assert, await createPayment(who), 503, 'service-unavailable')
    const card = page.locator(`#account-pending #pending-request-${request.id}`)
    assert.include(await card.innerText(), `change deposit account ${account.id}: active`)

    const second = await signedInAdmin('second@example.com')
    await second.goto(adminUrl(`/deposit-accounts/${account.id}`))
    await second.fill(`#approve-form-${request.id} input[name=comment]`, 'bank confirmed')
    await submit(second, `#approve-form-${request.id}`)
    assert.match(second.url(), new RegExp(`/admin/deposit-accounts/${account.id}$`))
    assert.equal(await second.locator('#active-state').innerText(), 'active')
    assert.equal(await second.locator('#account-pending').count(), 0)
    assert.equal((await createPayment(who)).status, 200)

    const rows = await auditRows('deposit_account.update', `deposit_account:${account.id}`)
    assert.deepEqual(
      rows.map((row) => [row.actor, json(row.before_values), json(row.after_values)]),
      [
        ['operator:admin@example.com', { active: true }, { active: false }],
        ['operator:second@example.com', { active: false }, { active: true }],
      ]
    )
    assert.equal(rows[0].comment, 'bank asked us to stop')
    // The two switches, the request and its approval.
    assert.lengthOf(await auditScreenRows(page, `deposit_account:${account.id}`), 4)
  })

  test('a change that could send money elsewhere waits on the account page and in the list; operators and viewers get no buttons and the server refuses them', async ({
    assert,
  }) => {
    const account = await createDepositAccount({ channel: 'qr', priority: 5 })
    const number = account.accountNo
    const page = await signedInAdmin()
    await page.goto(adminUrl(`/deposit-accounts/${account.id}`))
    await page.fill('#account-form #field-account_no', '555-1-23456-7')
    await page.fill('#account-form #field-promptpay_id', '0899999999')
    await page.fill('#account-form #field-priority', '1000')
    await page.fill('#account-form #field-max_amount', '5000')
    await page.fill('#account-form #field-comment', 'move to our new account')
    await submit(page, '#account-form')
    const request = await ApprovalRequest.findByOrFail('action', 'deposit_account.update')
    const flash = await page.locator('.flash.success').innerText()
    assert.include(flash, 'Saved: max_amount.')
    assert.include(flash, `approval request #${request.id} opened: waits for a second admin`)
    await account.refresh()
    assert.equal(account.maxAmount, 500_000, 'the lower limit applies at once')
    assert.equal(account.priority, 5)
    assert.equal(account.promptpayId, '0812345678')
    assert.deepEqual(request.changeAfter, {
      account_no: '5551234567',
      promptpay_id: '0899999999',
      priority: 1000,
    })
    const card = page.locator(`#account-pending #pending-request-${request.id}`)
    assert.equal(await card.locator(`#approve-request-${request.id}`).count(), 0)
    await screenshot(page, 'pending-change')
    await page.goto(adminUrl('/deposit-accounts'))
    assert.include(
      await page.locator(`#account-${account.id} .pending-change`).innerText(),
      `request #${request.id}`
    )
    await page.goto(adminUrl('/review/approvals'))
    await screenshot(page, 'approvals-queue')

    for (const role of ['operator', 'viewer'] as const) {
      const who = await signedInAs(`${role}@example.com`, role)
      contexts.push(who.context)
      await who.page.goto(adminUrl('/deposit-accounts'))
      assert.equal(await who.page.locator('#new-account').count(), 0, role)
      await who.page.goto(adminUrl(`/deposit-accounts/${account.id}`))
      assert.equal(await who.page.locator('#account-form').count(), 0, role)
      assert.equal(await who.page.locator('#active-form').count(), 0, role)
      const seen = who.page.locator(`#pending-request-${request.id}`)
      assert.include(await seen.innerText(), `change deposit account ${account.id}`)
      assert.equal(await seen.locator('form').count(), 0, `${role}: no Approve or Reject`)

      const csrf = (await csrfToken(who.page))!
      const forged = [
        [
          '/deposit-accounts',
          {
            deposit_group: 'g',
            channel: 'transfer',
            bank: 'SCB',
            account_no: '4021234567',
            account_name: 'X',
          },
        ],
        [`/deposit-accounts/${account.id}`, { account_no: '4021234567' }],
        [`/deposit-accounts/${account.id}/active`, { active: 'off', confirm: 'on' }],
        [`/review/approvals/${request.id}/approve`, { comment: 'me too' }],
      ] as const
      for (const [path, form] of forged) {
        const response = await who.page.request.post(adminUrl(path), {
          form: { _csrf: csrf, ...form },
          maxRedirects: 0,
        })
        if (path.startsWith('/review')) {
          // The approvals route is the operators'; the rules refuse who lacks the admin role.
          assert.notEqual(response.status(), 200, `${role} ${path}`)
        } else {
          assert.equal(response.status(), 403, `${role} ${path}`)
        }
      }
    }
    await account.refresh()
    assert.equal(account.accountNo, number)
    assert.isTrue(account.active)
    assert.equal((await request.refresh()).status, 'pending')
    assert.lengthOf(await DepositAccount.all(), 1)
  })

  test('a maintenance window in effect takes the account out; cancelling it brings it back', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr', bank: 'KBANK' })
    const page = await signedInAdmin()
    const now = DateTime.utc()
    await page.goto(adminUrl('/deposit-accounts'))

    // The end before the start: refused beside "to", what was typed is kept.
    await page.fill('#maintenance-form #field-deposit_account_id', String(account.id))
    await page.fill('#maintenance-form #field-from', bangkokInput(now.minus({ minutes: 5 })))
    await page.fill('#maintenance-form #field-to', bangkokInput(now.minus({ minutes: 10 })))
    await page.fill('#maintenance-form #field-reason', 'statement feed upgrade')
    await submit(page, '#maintenance-form')
    assert.include(
      await page.locator('#maintenance-form #error-to').innerText(),
      'to must be after from'
    )
    assert.equal(await page.inputValue('#maintenance-form #field-reason'), 'statement feed upgrade')
    assert.equal((await MaintenanceWindow.all()).length, 0)

    await page.fill('#maintenance-form #field-to', bangkokInput(now.plus({ hours: 1 })))
    await submit(page, '#maintenance-form')
    const window = await MaintenanceWindow.firstOrFail()
    assert.equal(window.depositAccountId, account.id)
    assert.include(await page.locator(`#window-${window.id}`).innerText(), 'in effect')
    assert.include(
      await page.locator(`#account-${account.id} .status`).innerText(),
      'in maintenance until'
    )
    await screenshot(page, 'maintenance')
    assertError(assert, await createPayment(who), 503, 'service-unavailable')

    await submit(page, `#cancel-window-${window.id}`)
    assert.isNotNull((await window.refresh()).cancelledAt)
    assert.equal(await page.locator(`#window-${window.id}`).count(), 0)
    assert.include(await page.locator('#cancelled-windows').innerText(), 'statement feed upgrade')
    assert.equal((await createPayment(who)).status, 200)

    // A window for every account of a bank, from now.
    await page.fill('#maintenance-form #field-to', bangkokInput(now.plus({ hours: 2 })))
    await page.selectOption('#maintenance-form #field-bank', 'KBANK')
    await page.fill('#maintenance-form #field-reason', 'KBANK downtime')
    await submit(page, '#maintenance-form')
    const bankWindow = await MaintenanceWindow.query().where('bank', 'KBANK').firstOrFail()
    assert.include(
      await page.locator(`#window-${bankWindow.id}`).innerText(),
      'every KBANK account'
    )
    assertError(assert, await createPayment(who), 503, 'service-unavailable')

    const scheduled = await auditRows(
      'maintenance_window.schedule',
      `maintenance_window:${window.id}`
    )
    assert.equal(json(scheduled[0].after_values).deposit_account_id, account.id)
    assert.equal(scheduled[0].actor, 'operator:admin@example.com')
    const cancelled = await auditRows(
      'maintenance_window.cancel',
      `maintenance_window:${window.id}`
    )
    assert.lengthOf(cancelled, 1)
    assert.lengthOf(await auditScreenRows(page, `maintenance_window:${window.id}`), 2)
    assert.lengthOf(await auditScreenRows(page, `maintenance_window:${bankWindow.id}`), 1)
  })
})
