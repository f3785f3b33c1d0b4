import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import type { BrowserContext, Page } from 'playwright-core'
import Merchant from '#merchants/models/merchant'
import ApprovalRequest from '#approvals/models/approval_request'
import MerchantCredential from '#merchants/models/merchant_credential'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { createPlatform } from '#merchants/actions/create_platform'
import { createMerchant } from '#merchants/actions/create_merchant'
import { GATEWAY_ZONE } from '#core/clock'
import { dispatch } from '#core/queue/queue_manager'
import { closeBrowser } from '#tests/helpers/browser'
import { assertError } from '#tests/helpers/envelope'
import {
  TEST_ACTOR,
  authBody,
  createDepositAccount,
  createTestMerchant,
  creditMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'
import { startTestWorker, until } from '#tests/helpers/worker'

const ADMIN = 'admin@example.com'

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

async function screenshot(page: Page, name: string) {
  if (process.env.SCREENSHOTS) {
    await page.screenshot({ path: `docs/screenshots/merchants-${name}.png`, fullPage: true })
  }
}

/** The values the one-time page shows, as a caller of the merchant API would use them. */
async function shownCaller(page: Page, base?: TestMerchant): Promise<TestMerchant> {
  const text = async (id: string) =>
    (await page.locator(id).count()) > 0 ? (await page.locator(id).innerText()).trim() : undefined
  const merchantId = (await text('#shown-merchant-id'))!
  return {
    merchant: base?.merchant ?? (await Merchant.findByOrFail('merchant_id', merchantId)),
    merchantId,
    token: (await text('#shown-token')) ?? base!.token,
    secret: (await text('#shown-secret')) ?? base!.secret,
  }
}

const balance = (who: TestMerchant, localAddress?: string) =>
  signedPost('/balance', who, authBody(who), { localAddress })

/** The audit log screen filtered on a merchant: the action of each row shown. */
async function auditActions(page: Page, merchantId: string) {
  await page.goto(adminUrl(`/audit?target=merchant:${merchantId}`))
  return page.locator('#audit-table tbody tr td:nth-child(3)').allInnerTexts()
}

async function count(table: string) {
  return Number((await db.from(table).count('* as total'))[0].total)
}

const json = (value: any) => (typeof value === 'string' ? JSON.parse(value) : value)

/** A date-time field's value in Bangkok time, `seconds` from now. */
const bangkokInSeconds = (seconds: number) =>
  DateTime.now().setZone(GATEWAY_ZONE).plus({ seconds }).toFormat("yyyy-LL-dd'T'HH:mm:ss")

/**
 * The merchants screens in headless Chromium, checked where it matters: the
 * merchant API answering the credentials and settings the panel shows, the
 * database, and the audit log.
 */
test.group('back-office merchants (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    secondPage = null
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  async function admin() {
    const signedIn = await signedInAs(ADMIN, 'admin')
    contexts.push(signedIn.context)
    return signedIn.page
  }

  /** The second admin's page, signed in once per test. */
  let secondPage: Page | null = null
  async function secondAdmin() {
    if (secondPage && !secondPage.isClosed()) return secondPage
    const second = await signedInAs('second@example.com', 'admin')
    contexts.push(second.context)
    secondPage = second.page
    return secondPage
  }

  /** A second admin approves the credentials request on the approvals queue. */
  async function approvedBySecondAdmin(requestId: number, shot?: string) {
    const second = { page: await secondAdmin() }
    await second.page.goto(adminUrl('/review/approvals'))
    if (shot) await screenshot(second.page, shot)
    await second.page.fill(
      `#approve-form-${requestId} input[name=comment]`,
      'checked with the merchant'
    )
    await submit(second.page, `#approve-form-${requestId}`)
    const request = await ApprovalRequest.findOrFail(requestId)
    if (request.status !== 'approved') throw new Error(`request #${requestId} is ${request.status}`)
    return request
  }

  test('a merchant created in the panel whose shown credentials work on /balance', async ({
    assert,
  }) => {
    await createPlatform({ code: 'acme', name: 'Acme' }, TEST_ACTOR)
    const page = await admin()
    await page.goto(adminUrl('/merchants'))
    await Promise.all([page.waitForNavigation(), page.click('#new-merchant')])

    // Refused beside the fields, typed values kept, nothing created.
    await page.fill('#field-name', 'Siam Shop')
    await page.fill('#field-order_prefix', 'ab')
    await submit(page, '#merchant-new-form')
    assert.include(await page.locator('#error-platform').innerText(), 'platform')
    assert.include(await page.locator('#error-order_prefix').innerText(), '3 uppercase')
    assert.equal(await page.inputValue('#field-name'), 'Siam Shop')
    assert.equal(await count('merchants'), 0)

    await page.selectOption('#field-platform', 'acme')
    await page.fill('#field-order_prefix', 'SIA')
    await screenshot(page, 'new')
    await submit(page, '#merchant-new-form')
    assert.match(page.url(), /\/admin\/merchants\/M\d{9}\/credentials$/)
    assert.include(await page.locator('#shown-once-warning').innerText(), 'Shown once')
    assert.include(await page.locator('.signing-rule').innerText(), 'HMAC-SHA256')
    await screenshot(page, 'credentials')
    const who = await shownCaller(page)
    assert.lengthOf(who.token, 40)
    assert.lengthOf(who.secret, 48)
    assert.equal(who.merchant.name, 'Siam Shop')
    assert.equal(who.merchant.orderPrefix, 'SIA')

    const answer = await balance(who)
    assert.equal(answer.status, 200, answer.text)
    assert.equal(answer.json.data.balance, 0)

    // Shown once: the page again leads to the merchant, without the values.
    await page.reload()
    assert.match(page.url(), new RegExp(`/admin/merchants/${who.merchantId}$`))
    assert.notInclude(await page.content(), who.secret)
    assert.notInclude(await page.content(), who.token)

    const [audit] = await db.from('audit_logs').where('action', 'merchant.create')
    assert.equal(audit.actor, `operator:${ADMIN}`)
    assert.equal(audit.subject_id, who.merchantId)
    assert.equal(json(audit.after_values).order_prefix, 'SIA')
    assert.notInclude(JSON.stringify(audit), who.secret)
    assert.notInclude(JSON.stringify(audit), who.token)
    assert.deepEqual(await auditActions(page, who.merchantId), ['merchant.create'])
  })

  test('the list: search by merchant_id or name, filter by platform and status, sort, paginate, balances', async ({
    assert,
  }) => {
    await createPlatform({ code: 'acme', name: 'Acme' }, TEST_ACTOR)
    await createPlatform({ code: 'beta', name: 'Beta' }, TEST_ACTOR)
    const created = []
    for (let index = 1; index <= 27; index++) {
      const { merchant } = await createMerchant(
        {
          platform: index % 3 === 0 ? 'beta' : 'acme',
          name: `Shop ${String(index).padStart(2, '0')}`,
          merchant_id: `M${100 + index}`,
        },
        TEST_ACTOR
      )
      created.push(merchant)
    }
    await creditMerchant(created[4], 'available', 123_456)
    created[5].merge({ status: 'suspended', depositGroup: 'grp-a', payoutRoute: 'sandbox' })
    await created[5].save()

    const page = await admin()
    await page.goto(adminUrl('/merchants'))
    const rows = page.locator('#merchants-table tbody tr')
    assert.equal(await rows.count(), 25)
    assert.include(await page.locator('.pagination').innerText(), '27 in all')
    assert.include(await rows.first().innerText(), 'M127', 'newest first')
    await screenshot(page, 'index')

    await page.fill('#field-q', 'm105')
    await submit(page, '#merchant-filters')
    assert.equal(await rows.count(), 1)
    assert.include(await rows.first().innerText(), '1,234.56')

    await page.goto(adminUrl('/merchants?q=shop 06'))
    assert.equal(await rows.count(), 1)
    const suspended = await rows.first().innerText()
    for (const shown of ['M106', 'suspended', 'grp-a', 'sandbox']) assert.include(suspended, shown)

    await page.goto(adminUrl('/merchants'))
    await page.selectOption('#field-platform', 'beta')
    await page.selectOption('#field-status', 'active')
    await submit(page, '#merchant-filters')
    assert.equal(await rows.count(), 8, '9 on beta, M106 suspended')
    assert.notInclude(await page.locator('#merchants-table').innerText(), 'acme')

    await page.goto(adminUrl('/merchants'))
    await Promise.all([page.waitForNavigation(), page.click('#merchants-table th >> text=Name')])
    assert.include(await rows.first().innerText(), 'Shop 01')
    await Promise.all([page.waitForNavigation(), page.click('#merchants-table th >> text=Name')])
    assert.include(await rows.first().innerText(), 'Shop 27')
    await Promise.all([page.waitForNavigation(), page.click('.pagination >> text=Next')])
    assert.equal(await rows.count(), 2)
    assert.include(await rows.last().innerText(), 'Shop 01', 'page 2 keeps the sort')

    // A sort column outside the whitelist is ignored, not an error.
    const odd = await page.goto(adminUrl('/merchants?sort=token_hash&dir=sideways'))
    assert.equal(odd!.status(), 200)
  })

  test('settings: a field error, then success on the API; suspend and activate, confirmed; a viewer sees no form', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    // The group select offers the pool's groups.
    await createDepositAccount({ depositGroup: 'grp-a' })
    const page = await admin()
    await page.goto(adminUrl(`/merchants/${who.merchantId}`))
    assert.include(await page.locator('#merchant-warnings').innerText(), 'no deposit group')

    await page.fill('#field-order_ttl_seconds', '10')
    await page.fill('#field-withdraw_fee_flat', 'ten baht')
    await page.fill('#field-comment', 'new contract')
    await submit(page, '#merchant-settings-form')
    assert.include(await page.locator('#error-order_ttl_seconds').innerText(), '60 to 86400')
    assert.include(await page.locator('#error-withdraw_fee_flat').innerText(), 'THB amount')
    assert.equal(await page.inputValue('#field-withdraw_fee_flat'), 'ten baht')
    await screenshot(page, 'settings-errors')
    assert.equal((await who.merchant.refresh()).orderTtlSeconds, 900)

    await page.fill('#field-order_ttl_seconds', '1800')
    await page.fill('#field-withdraw_fee_flat', '15')
    await page.selectOption('#field-deposit_group', 'grp-a')
    await page.fill('#field-api_rate_limit', '7')
    await page.uncheck('#field-payment_enabled')
    await submit(page, '#merchant-settings-form')
    // The fee waits for a second admin; the rest is saved at once.
    const saved = await page.locator('.flash.success').innerText()
    assert.include(saved, 'Saved')
    assert.match(saved, /approval request #\d+ opened: waits for a second admin/)
    await who.merchant.refresh()
    assert.equal(who.merchant.orderTtlSeconds, 1800)
    assert.equal(who.merchant.withdrawFeeFlat, 0)
    assert.equal(who.merchant.depositGroup, 'grp-a')
    assert.equal(who.merchant.apiRateLimit, 7)
    assert.isFalse(who.merchant.paymentEnabled)
    assert.include(await page.locator('#merchant-warnings').innerText(), 'payments are off')
    const feeRequest = await ApprovalRequest.query()
      .where('action', 'merchant.configure')
      .firstOrFail()
    const card = page.locator(`#pending-request-${feeRequest.id}`)
    assert.include(await card.innerText(), 'withdraw_fee_flat 15.00 THB')
    assert.include(await card.locator('.own-request').innerText(), 'You asked for this request')
    assert.equal(await page.locator(`#approve-request-${feeRequest.id}`).count(), 0)
    const refused = await signedPost(
      '/payment/create',
      who,
      authBody(who, {
        merchant_order_id: 'S1',
        amount: '100.00',
        bank: 'KBANK',
        account_name: 'Somchai Jaidee',
        account_no: '1234567890',
      })
    )
    assertError(assert, refused, 403, 'permission-denied')
    const [configured] = await db.from('audit_logs').where('action', 'merchant.configure')
    assert.deepEqual(json(configured.before_values), {
      deposit_group: null,
      payment_enabled: true,
      order_ttl_seconds: 900,
      api_rate_limit: null,
    })
    assert.equal(configured.comment, 'new contract')

    // A second admin approves it from the merchant page: the fee is carried out as asked.
    const second = await signedInAs('second-admin@example.com', 'admin')
    contexts.push(second.context)
    await second.page.goto(adminUrl(`/merchants/${who.merchantId}`))
    await second.page.fill(`#approve-form-${feeRequest.id} input[name=comment]`, 'contract seen')
    await submit(second.page, `#approve-form-${feeRequest.id}`)
    assert.equal((await who.merchant.refresh()).withdrawFeeFlat, 1500)
    assert.equal(await second.page.locator(`#pending-request-${feeRequest.id}`).count(), 0)
    const [, approvedFee] = await db
      .from('audit_logs')
      .where('action', 'merchant.configure')
      .orderBy('id')
    assert.equal(approvedFee.actor, 'operator:second-admin@example.com')
    assert.deepEqual(json(approvedFee.after_values), { withdraw_fee_flat: '15.00' })

    // Suspension needs the tick and a reason; then every call fails authentication.
    await submit(page, '#merchant-status-form')
    assert.include(await page.locator('#error-status_confirm').innerText(), 'confirm')
    assert.include(await page.locator('#error-status_comment').innerText(), 'reason')
    assert.equal((await who.merchant.refresh()).status, 'active')
    await page.check('#field-status_confirm')
    await page.fill('#field-status_comment', 'chargeback investigation')
    await submit(page, '#merchant-status-form')
    assert.equal(await page.locator('#merchant-status').innerText(), 'suspended')
    assertError(assert, await balance(who), 403, 'authentication-failed')
    // Activating again waits for a second admin.
    await page.check('#field-status_confirm')
    await page.fill('#field-status_comment', 'cleared')
    await submit(page, '#merchant-status-form')
    assert.equal(await page.locator('#merchant-status').innerText(), 'suspended')
    assertError(assert, await balance(who), 403, 'authentication-failed')
    const activation = await ApprovalRequest.query()
      .where('action', 'merchant.configure')
      .where('status', 'pending')
      .firstOrFail()
    await second.page.goto(adminUrl(`/merchants/${who.merchantId}`))
    await second.page.fill(`#approve-form-${activation.id} input[name=comment]`, 'cleared')
    await submit(second.page, `#approve-form-${activation.id}`)
    assert.equal(await second.page.locator('#merchant-status').innerText(), 'active')
    assert.equal((await balance(who)).status, 200)
    const statuses = await db
      .from('audit_logs')
      .where('action', 'merchant.configure')
      .whereNotNull('after_values')
      .orderBy('id')
      .select('after_values', 'comment', 'actor')
    assert.deepEqual(
      statuses.slice(2).map((row) => [json(row.after_values).status, row.comment, row.actor]),
      [
        ['suspended', 'chargeback investigation', `operator:${ADMIN}`],
        ['active', 'cleared', 'operator:second-admin@example.com'],
      ]
    )

    // A viewer reads everything but has no form, and the server refuses its POST.
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    await viewer.page.goto(adminUrl(`/merchants/${who.merchantId}`))
    assert.include(await viewer.page.locator('#merchant-settings').innerText(), 'grp-a')
    assert.equal(await viewer.page.locator('main form').count(), 0)
    const forbidden = await viewer.page.request.post(adminUrl(`/merchants/${who.merchantId}`), {
      form: { _csrf: (await csrfToken(viewer.page))!, order_ttl_seconds: '60' },
      maxRedirects: 0,
    })
    assert.equal(forbidden.status(), 403)
    assert.equal((await who.merchant.refresh()).orderTtlSeconds, 1800)
  })

  test('IP whitelist: a bad CIDR refused beside the field; an added address makes other sources 403; settlement accounts', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const page = await admin()
    await page.goto(adminUrl(`/merchants/${who.merchantId}`))

    await page.fill('#field-ip_add', '10.0.0.0/33')
    await submit(page, '#ip-whitelist-form')
    assert.include(
      await page.locator('#error-ip_add').innerText(),
      '"10.0.0.0/33" is not an IPv4/IPv6 address or CIDR block'
    )
    assert.equal(await page.inputValue('#field-ip_add'), '10.0.0.0/33')
    assert.equal(await page.locator('#error-settlement_add').count(), 0, 'only beside its form')
    assert.equal(await count('merchant_ip_whitelist'), 0)

    await page.fill('#field-ip_add', '127.0.0.1 198.51.100.0/24')
    await page.fill('#field-ip_comment', 'office')
    await submit(page, '#ip-whitelist-form')
    assert.include(await page.locator('.flash.success').innerText(), '127.0.0.1/32')
    assert.deepEqual(await page.locator('#ip-whitelist-table td.mono').allInnerTexts(), [
      '127.0.0.1/32',
      '198.51.100.0/24',
    ])
    assert.equal((await balance(who, '127.0.0.1')).status, 200)
    const outside = await balance(who, '127.0.0.5')
    assertError(assert, outside, 403, 'ip-not-whitelisted')
    assert.include(outside.json.message, '127.0.0.5')

    await submit(page, '#ip-remove-0')
    assert.deepEqual(await page.locator('#ip-whitelist-table td.mono').allInnerTexts(), [
      '198.51.100.0/24',
    ])
    assertError(assert, await balance(who, '127.0.0.1'), 403, 'ip-not-whitelisted')
    // Removing the last entry opens the merchant to every source: a second admin.
    await submit(page, '#ip-remove-0')
    assert.match(
      await page.locator('.flash.success').innerText(),
      /approval request #\d+ opened: waits for a second admin/
    )
    assertError(assert, await balance(who, '127.0.0.5'), 403, 'ip-not-whitelisted')
    const second = await signedInAs('second-admin@example.com', 'admin')
    contexts.push(second.context)
    const approveOn = async (action: string) => {
      const request = await ApprovalRequest.query()
        .where('action', action)
        .where('status', 'pending')
        .firstOrFail()
      await second.page.goto(adminUrl(`/merchants/${who.merchantId}`))
      await second.page.fill(`#approve-form-${request.id} input[name=comment]`, 'checked')
      await submit(second.page, `#approve-form-${request.id}`)
      return request
    }
    await approveOn('merchant.ip_whitelist')
    assert.equal((await balance(who, '127.0.0.5')).status, 200, 'an empty list accepts all')

    // Settlement accounts: the same editor, validated; every change waits for a second admin.
    await page.fill('#field-settlement_add', 'XBANK:12')
    await submit(page, '#settlement-accounts-form')
    assert.include(await page.locator('#error-settlement_add').innerText(), 'BANK:ACCOUNT_NO')
    await page.fill('#field-settlement_add', 'KBANK:123-4-56789-0')
    await page.fill('#field-settlement_comment', 'company account')
    await submit(page, '#settlement-accounts-form')
    assert.equal(await count('merchant_settlement_accounts'), 0)
    const asked = await ApprovalRequest.query()
      .where('action', 'merchant.settlement_accounts')
      .firstOrFail()
    const card = page.locator(`#pending-request-${asked.id}`)
    assert.include(await card.innerText(), 'register KBANK:1234567890')
    assert.include(await card.innerText(), 'Why: company account')
    await card.scrollIntoViewIfNeeded()
    await screenshot(page, 'settlement-account-request')

    // Operators and viewers see the request but no button and no form; their POSTs are refused.
    for (const role of ['operator', 'viewer'] as const) {
      const other = await signedInAs(`${role}@example.com`, role)
      contexts.push(other.context)
      await other.page.goto(adminUrl(`/merchants/${who.merchantId}`))
      assert.include(await other.page.locator(`#pending-request-${asked.id}`).innerText(), 'KBANK')
      assert.equal(await other.page.locator('main form').count(), 0, role)
      const token = (await csrfToken(other.page))!
      for (const [path, form] of [
        ['settlement-accounts', { settlement_add: 'BBL:9876543210' }],
        ['ip-whitelist', { ip_add: '10.0.0.1' }],
        ['', { payout_route: 'sandbox' }],
      ] as const) {
        const forged = await other.page.request.post(
          adminUrl(`/merchants/${who.merchantId}${path ? `/${path}` : ''}`),
          { form: { _csrf: token, ...form }, maxRedirects: 0 }
        )
        assert.equal(forged.status(), 403, `${role} ${path}`)
      }
      const approveForged = await other.page.request.post(
        adminUrl(`/review/approvals/${asked.id}/approve`),
        { form: { _csrf: token, comment: 'me too' }, maxRedirects: 0 }
      )
      assert.notEqual(approveForged.status(), 200, role)
      assert.equal((await asked.refresh()).status, 'pending', role)
    }

    await approveOn('merchant.settlement_accounts')
    assert.deepEqual(await page.locator('#settlement-accounts-table td.mono').count(), 0)
    await page.reload()
    assert.deepEqual(await page.locator('#settlement-accounts-table td.mono').allInnerTexts(), [
      'KBANK:1234567890',
    ])
    const registered = await db.from('merchant_settlement_accounts').select('bank', 'account_no')
    assert.deepEqual(registered, [{ bank: 'KBANK', account_no: '1234567890' }])
    await submit(page, '#settlement-remove-0')
    assert.equal(await count('merchant_settlement_accounts'), 1, 'waits for a second admin')
    await approveOn('merchant.settlement_accounts')
    assert.equal(await count('merchant_settlement_accounts'), 0)
    await page.reload()
    assert.include(
      await page.locator('#settlement-none').innerText(),
      'every settlement is refused until one is'
    )

    const edits = await db
      .from('audit_logs')
      .where('action', 'merchant.ip_whitelist.edit')
      .orderBy('id')
      .select('before_values', 'after_values', 'comment', 'actor')
    assert.deepEqual(json(edits[0].after_values), {
      ip_whitelist: ['127.0.0.1/32', '198.51.100.0/24'],
    })
    assert.equal(edits[0].comment, 'office')
    assert.equal(edits[2].actor, 'operator:second-admin@example.com')
    assert.deepEqual(await auditActions(page, who.merchantId), [
      'approval.approve',
      'merchant.settlement_accounts.edit',
      'approval.request',
      'approval.approve',
      'merchant.settlement_accounts.edit',
      'approval.request',
      'approval.approve',
      'merchant.ip_whitelist.edit',
      'approval.request',
      'merchant.ip_whitelist.edit',
      'merchant.ip_whitelist.edit',
      'merchant.create',
    ])
  })

  test('a rotation with grace: asked by one admin, approved by a second, the new values shown once to the first; the old ones work until the grace end', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const page = await admin()
    await page.goto(adminUrl(`/merchants/${who.merchantId}`))

    await page.fill('#field-rotate_grace_seconds', '6')
    await submit(page, '#rotate-form')
    assert.include(await page.locator('#error-rotate_token').innerText(), 'choose what to rotate')
    assert.equal(await count('merchant_credentials'), 1)

    await page.check('#field-rotate_token')
    await page.check('#field-rotate_secret')
    await page.fill('#field-rotate_comment', 'yearly rotation')
    await submit(page, '#rotate-form')
    const request = await ApprovalRequest.findByOrFail('kind', 'credential_rotation')
    assert.include(
      await page.locator('.flash.success').innerText(),
      `approval request #${request.id} opened: waits for a second admin`
    )
    assert.equal(await count('merchant_credentials'), 1, 'nothing changes on one admin’s click')
    assert.equal((await balance(who)).status, 200)

    await approvedBySecondAdmin(request.id, 'rotation-request')
    await page.reload()
    await screenshot(page, 'rotation-handover')
    await submit(page, '#handover-mine form')
    assert.match(page.url(), /\/handovers\/\d+$/)
    const rotated = await shownCaller(page, who)
    assert.notEqual(rotated.token, who.token)
    assert.notEqual(rotated.secret, who.secret)
    const previous = await MerchantCredential.query().whereNotNull('expires_at').firstOrFail()
    const graceEnd = previous.expiresAt!.setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd HH:mm:ss')
    assert.include(await page.locator('#grace-end').innerText(), graceEnd)
    assert.include(
      await page.locator('#handover-instructions').innerText(),
      'two different channels'
    )
    await screenshot(page, 'rotated')

    assert.equal((await balance(who)).status, 200, 'the old values work during the grace')
    assert.equal((await balance(rotated)).status, 200, 'the new values work at once')

    await page.goto(adminUrl(`/merchants/${who.merchantId}`))
    assert.notInclude(await page.content(), rotated.secret)
    assert.equal(await page.locator('#handover-mine').count(), 0, 'shown once')
    assert.equal(await page.locator('#credentials-table .credential-grace').count(), 1)
    assert.include(await page.locator('#credentials-table .credential-grace').innerText(), graceEnd)

    assert.isTrue(
      await until(async () => (await balance(who)).status === 403, 10_000),
      'the old values stop at the grace end'
    )
    assert.isTrue(previous.expiresAt! <= DateTime.now())
    assertError(assert, await balance(who), 403, 'authentication-failed')
    assert.equal((await balance(rotated)).status, 200)

    const [audit] = await db.from('audit_logs').where('action', 'merchant.credentials.rotate')
    assert.equal(audit.actor, 'operator:second@example.com')
    assert.equal(audit.comment, 'yearly rotation')
    assert.include(json(audit.details), {
      token_rotated: true,
      secret_rotated: true,
      grace_seconds: 6,
    })
    for (const value of [rotated.token, rotated.secret]) {
      assert.notInclude(JSON.stringify(audit), value)
    }
    const actions = await auditActions(page, who.merchantId)
    for (const action of [
      'merchant.credentials.handover',
      'merchant.credentials.rotate',
      'approval.approve',
      'approval.request',
      'merchant.create',
    ]) {
      assert.include(actions, action)
    }
  })

  test('a scheduled rotation approved by a second admin and carried out by the worker: shown once to its requester, it works on /balance', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    const page = await admin()
    await page.goto(adminUrl(`/merchants/${who.merchantId}`))

    await page.fill('#field-schedule_run_at', bangkokInSeconds(-60))
    await page.check('#field-schedule_secret')
    await submit(page, '#schedule-rotation-form')
    assert.include(await page.locator('#error-schedule_run_at').innerText(), 'in the future')
    assert.equal(await count('scheduled_credential_rotations'), 0)

    // One far ahead, approved, then cancelled (at once: it only stops a rotation).
    await page.fill('#field-schedule_run_at', bangkokInSeconds(86_400))
    await page.check('#field-schedule_token')
    await submit(page, '#schedule-rotation-form')
    assert.equal(await count('scheduled_credential_rotations'), 0, 'scheduled only when approved')
    const first = await ApprovalRequest.findByOrFail('action', 'merchant.schedule_rotation')
    await approvedBySecondAdmin(first.id)
    await page.reload()
    const later = await ScheduledCredentialRotation.query().firstOrFail()
    await submit(page, `#rotation-cancel-${later.id}`)
    assert.include(await page.locator('.flash.success').innerText(), 'cancelled')
    assert.equal((await later.refresh()).status, 'cancelled')
    assert.include(
      await page.locator(`#rotation-${later.id} .rotation-status`).innerText(),
      'cancelled'
    )

    // One a few seconds ahead, token and secret, short grace (the second admin is
    // signed in already: the time must still be ahead when they approve).
    await secondAdmin()
    const runAt = bangkokInSeconds(6)
    await page.fill('#field-schedule_run_at', runAt)
    await page.check('#field-schedule_token')
    await page.check('#field-schedule_secret')
    await page.fill('#field-schedule_grace_seconds', '8')
    await page.fill('#field-schedule_comment', 'planned with the merchant')
    await submit(page, '#schedule-rotation-form')
    assert.include(await page.locator('.flash.success').innerText(), 'waits for a second admin')
    const second = await ApprovalRequest.query()
      .where('action', 'merchant.schedule_rotation')
      .where('status', 'pending')
      .firstOrFail()
    await approvedBySecondAdmin(second.id)
    const rotation = await ScheduledCredentialRotation.query()
      .where('status', 'scheduled')
      .firstOrFail()
    assert.equal(rotation.runAt.setZone(GATEWAY_ZONE).toFormat("yyyy-LL-dd'T'HH:mm:ss"), runAt)

    const stop = startTestWorker('operations')
    try {
      assert.isTrue(
        await until(async () => (await rotation.refresh()).status === 'done', 20_000),
        'the worker performs the rotation'
      )
      assert.isTrue(rotation.doneAt! >= rotation.runAt)
      await page.reload()
      const waiting = await page.locator('#handover-mine').innerText()
      const graceEnd = rotation.previousValidUntil!.setZone(GATEWAY_ZONE)
      assert.include(waiting, graceEnd.toFormat('yyyy-LL-dd HH:mm:ss'))
      assert.include(waiting, 'locked out')
      await screenshot(page, 'rotation-waiting')

      await submit(page, '#handover-mine form')
      assert.match(page.url(), /\/handovers\/\d+$/)
      assert.include(
        await page.locator('#grace-end').innerText(),
        graceEnd.toFormat('yyyy-LL-dd HH:mm:ss')
      )
      const revealed = await shownCaller(page, who)
      assert.notEqual(revealed.token, who.token)
      assert.equal((await balance(revealed)).status, 200, 'the values shown work')
      assert.equal((await balance(who)).status, 200, 'the old ones until the grace end')

      // Shown once: the values are gone from the database and the page.
      const handover = await db
        .from('credential_handovers')
        .where('rotation_id', rotation.id)
        .first()
      assert.isNull(handover.token_encrypted)
      assert.isNull(handover.secret_encrypted)
      await page.goto(adminUrl(`/merchants/${who.merchantId}`))
      assert.equal(await page.locator('#handover-mine').count(), 0)
      assert.include(
        await page.locator(`#rotation-${rotation.id}`).innerText(),
        `operator:${ADMIN}`
      )

      // The grace ends; the sweep job revokes the previous credentials.
      await until(async () => DateTime.now() > rotation.previousValidUntil!, 15_000)
      const sweep = await dispatch('sweepCredentials', {}, { jobId: `sweep-${Date.now()}` })
      assert.isTrue(await until(async () => (await sweep.getState()) === 'completed', 10_000))
      assertError(assert, await balance(who), 403, 'authentication-failed')
      assert.equal((await balance(revealed)).status, 200)
      await page.reload()
      assert.equal(await page.locator('#credentials-table .credential-revoked').count(), 1)
      assert.equal(await page.locator('#credentials-table .credential-current').count(), 1)
      await screenshot(page, 'show')
      await page.setViewportSize({ width: 820, height: 1180 })
      await screenshot(page, 'show-tablet')
    } finally {
      await stop()
    }

    const actions = await auditActions(page, who.merchantId)
    assert.deepEqual(
      actions.filter((action) => action.startsWith('merchant.')),
      [
        'merchant.credentials.revoke',
        'merchant.credentials.handover',
        'merchant.credentials.rotate',
        'merchant.credentials.schedule_rotation',
        'merchant.credentials.cancel_rotation',
        'merchant.credentials.schedule_rotation',
        'merchant.create',
      ]
    )
    const actors = await page.locator('#audit-table tbody tr td:nth-child(2)').allInnerTexts()
    assert.deepEqual(actors.slice(0, 3), ['system', `operator:${ADMIN}`, 'system'])
  })
})
