import { test } from '@japa/runner'
import { readFile, rm } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { configureMerchant } from '#merchants/actions/configure_merchant'
import { uploadSlip } from '#slips/actions/upload_slip'
import { reviewSlip } from '#slips/actions/review_slip'
import { cliActor } from '#core/actor'
import { recordAudit } from '#core/audit'
import { runAuditChainCheck, sealAuditLog, startAuditChain } from '#core/audit_chain'
import { closeBrowser, newContext, screenshot } from '#tests/helpers/browser'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  creditMerchant,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { operatorActor } from '#tests/helpers/decisions'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import {
  adminUrl,
  choosePassword,
  createOperator,
  LAPTOP,
  signedInAs,
  totpFor,
} from '#tests/helpers/admin'

/**
 * The back-office's small frictions, each seen by the roles that see it:
 * amounts written with thousands separators, the audit log's field tables,
 * the deposit group chosen from the pool's groups, approval cards with the
 * facts an approver checks, orders named by platform_order_id (never an
 * internal id) and recovery codes that can be copied and downloaded.
 */

type Role = 'admin' | 'operator' | 'viewer'

let sequence = 0
const uuids: string[] = []

async function transferOrder(who: TestMerchant, amount: string) {
  sequence += 1
  const response = await signedPost(
    '/payment/create-transfer',
    who,
    authBody(who, {
      merchant_order_id: `FRI${sequence}`,
      amount,
      bank: 'SCB',
      account_name: 'Somchai Jaidee',
      account_no: '1234567890',
      notify_url: 'https://merchant.example.test/cb',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PaymentOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  uuids.push(order.uuid)
  return order
}

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function text(page: Page, selector: string) {
  return (await page.locator(selector).innerText()).replace(/\s+/g, ' ')
}

test.group(
  'back-office: amounts, audit tables, group select, approval facts, labels, recovery codes (browser)',
  (group) => {
    const contexts: BrowserContext[] = []

    group.each.setup(async () => {
      await resetDatabase()
      return async () => {
        await Promise.all(contexts.splice(0).map((context) => context.close()))
      }
    })
    group.teardown(async () => {
      const root = env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')
      for (const uuid of uuids.splice(0)) {
        await rm(`${root}/slips/${uuid}`, { recursive: true, force: true })
      }
      await closeBrowser()
    })
    group.each.timeout(240_000)

    async function signInEveryRole(prefix: string) {
      const pages = {} as Record<Role, Page>
      for (const role of ['admin', 'operator', 'viewer'] as const) {
        const session = await signedInAs(`${prefix}-${role}@example.com`, role)
        contexts.push(session.context)
        pages[role] = session.page
      }
      return pages
    }

    test('amounts with thousands separators on the merchant and deposit-account pages; edit forms keep values that parse', async ({
      assert,
    }) => {
      const who = await createDepositMerchant({ withdrawFeeFlat: 125_000, payoutRoute: 'sandbox' })
      await creditMerchant(who.merchant, 'available', 123_456_789)
      const account = await createDepositAccount({
        channel: 'transfer',
        maxAmount: 5_000_000,
        dailyAmountLimit: 100_000_000,
      })
      const pages = await signInEveryRole('amounts')
      for (const [role, page] of Object.entries(pages)) {
        await page.goto(adminUrl(`/merchants?q=${who.merchantId}`))
        assert.include(await text(page, 'table'), '1,234,567.89', role)
        assert.notInclude(await text(page, 'table'), '1234567.89', role)

        await page.goto(adminUrl(`/merchants/${who.merchantId}`))
        assert.include(await text(page, '#balance'), '1,234,567.89 THB', role)

        await page.goto(adminUrl('/deposit-accounts'))
        assert.include(await text(page, 'body'), '20.00 – 50,000.00', role)
        await page.goto(adminUrl(`/deposit-accounts/${account.id}`))
        assert.include(await text(page, '.usage-day-amount'), '1,000,000.00', role)
        if (role === 'admin') {
          // The edit form is filled with what it parses back.
          assert.equal(await page.inputValue('#field-daily_amount_limit'), '1000000.00')
        } else {
          assert.include(await text(page, 'body'), '1,000,000.00 THB', role)
        }
      }
      // The admin's settings form: amounts the action parses back, not "1,250.00".
      const admin = pages.admin
      await admin.goto(adminUrl(`/merchants/${who.merchantId}`))
      assert.equal(await admin.inputValue('#field-withdraw_fee_flat'), '1250.00')
      // The others read the settings with separators.
      await pages.viewer.goto(adminUrl(`/merchants/${who.merchantId}`))
      assert.include(await text(pages.viewer, '#merchant-settings + dl'), '1,250.00 THB')
    })

    test('the audit log shows a field table per row, changed fields marked, the raw JSON kept; the rows stay as written', async ({
      assert,
    }) => {
      const who = await createDepositMerchant()
      // From the server's shell: a fee change applies at once (in the back-office it waits).
      const actor = cliActor()
      await configureMerchant(
        {
          merchant_id: who.merchantId,
          withdraw_fee_flat: '1250.00',
          order_ttl_seconds: 1234,
          comment: 'new fees',
        },
        actor
      )
      const stored = await db
        .from('audit_logs')
        .where('action', 'merchant.configure')
        .select('id', 'before_values', 'after_values')
      assert.lengthOf(stored, 1)

      const pages = await signInEveryRole('audit')
      for (const [role, page] of Object.entries(pages)) {
        await page.goto(
          adminUrl(`/audit?target=merchant:${who.merchantId}&action=merchant.configure`)
        )
        const row = page.locator('#audit-table > tbody > tr').first()
        const fee = row.locator('.audit-change[data-field="withdraw_fee_flat"]')
        assert.equal(await fee.count(), 1, role)
        assert.include((await fee.getAttribute('class')) ?? '', 'changed', role)
        assert.notEqual((await fee.locator('.before').innerText()).trim(), '1,250.00', role)
        assert.equal((await fee.locator('.after').innerText()).trim(), '1,250.00', role)
        const ttl = row.locator('.audit-change[data-field="order_ttl_seconds"]')
        assert.equal((await ttl.locator('.after').innerText()).trim(), '1234', role)
        // Every other field of the row is there, not marked.
        assert.equal(
          await row.locator('.audit-change.changed').count(),
          2,
          `${role}: only withdraw_fee_flat and order_ttl_seconds changed`
        )
        // The stored JSON, untouched, behind a disclosure.
        const raw = row.locator('details.raw-json')
        assert.equal(await raw.count(), 1, role)
        await raw.locator('summary').click()
        assert.include(await raw.innerText(), '"withdraw_fee_flat": "1250.00"', role)
        assert.equal(await page.locator('#audit-table > tbody > tr').count(), 1, role)
      }
      await screenshot(pages.operator, 'audit-field-table')
      // Reading the log changed nothing in it (only the sign-ins were added).
      const after = await db
        .from('audit_logs')
        .where('action', 'merchant.configure')
        .select('id', 'before_values', 'after_values')
      assert.deepEqual(after, stored)
    })

    test('a row rewritten in the database behind its seal is flagged on the audit page, in the list and in its detail', async ({
      assert,
    }) => {
      await startAuditChain()
      const entry = await db.transaction((trx) =>
        recordAudit(trx, cliActor(), {
          action: 'merchant.configure',
          target: { type: 'merchant', id: 'M100000001' },
          before: { withdraw_fee_flat: '0.00' },
          after: { withdraw_fee_flat: '1250.00' },
          reason: { comment: 'new fees' },
        })
      )
      await sealAuditLog()
      // What someone with the database's rights does: around the trigger, the row changed.
      await db.rawQuery('DROP TRIGGER audit_logs_no_update')
      await db.rawQuery(
        `UPDATE audit_logs SET after_values = JSON_SET(after_values, '$.withdraw_fee_flat', '0.00') WHERE id = ?`,
        [entry.id]
      )
      await db.rawQuery(
        `CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs
         FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_logs is append-only'`
      )
      await runAuditChainCheck(cliActor())

      const session = await signedInAs('chain-viewer@example.com', 'viewer')
      contexts.push(session.context)
      const page = session.page
      await page.goto(adminUrl('/audit?target=merchant:M100000001'))
      assert.include(
        await page.locator('#audit-chain.flash.error').innerText(),
        'Audit chain broken.'
      )
      const flagged = page.locator(`#audit-table tr[data-audit-id="${entry.id}"]`)
      assert.equal(
        (await flagged.locator('.badge.seal-flag').innerText()).trim(),
        'does not match its seal'
      )
      assert.include(await flagged.locator('.seal-problem').innerText(), 'after_values changed')
      await screenshot(page, 'audit-chain-broken')
    })

    test('the deposit group is chosen from the pool: kept on an error, an unknown group refused beside the field, an orphan group kept and said', async ({
      assert,
    }) => {
      await createDepositAccount({ depositGroup: 'test-group' })
      await createDepositAccount({ depositGroup: 'vip' })
      await createDepositAccount({ depositGroup: 'vip' })
      const who = await createDepositMerchant()
      const pages = await signInEveryRole('group')
      const page = pages.admin
      await page.goto(adminUrl(`/merchants/${who.merchantId}`))
      const options = await page.locator('#field-deposit_group option').allInnerTexts()
      assert.deepEqual(
        options.map((option) => option.trim()),
        ['none (payment create answers 404)', 'test-group (1 account)', 'vip (2 accounts)']
      )
      assert.equal(await page.inputValue('#field-deposit_group'), 'test-group')
      await screenshot(page, 'merchant-group-select')

      // Another field refused: the chosen group stays chosen, nothing saved.
      await page.selectOption('#field-deposit_group', 'vip')
      await page.fill('#field-order_ttl_seconds', '5')
      await page.fill('#field-comment', 'move to vip')
      await submit(page, '#merchant-settings-form button[type=submit]')
      assert.isNotEmpty(await text(page, '#error-order_ttl_seconds'))
      assert.equal(await page.inputValue('#field-deposit_group'), 'vip')
      await who.merchant.refresh()
      assert.equal(who.merchant.depositGroup, 'test-group')

      // A group no account has, posted anyway: refused beside the field.
      await page.fill('#field-order_ttl_seconds', '900')
      await page.evaluate(
        `document.querySelector('#field-deposit_group').add(new Option('ghost', 'ghost', true, true))`
      )
      await page.fill('#field-comment', 'a typo')
      await submit(page, '#merchant-settings-form button[type=submit]')
      assert.include(
        await text(page, '#error-deposit_group'),
        'deposit_group: no deposit account is in group "ghost"'
      )
      // What was posted stays shown, never silently another group.
      assert.equal(await page.inputValue('#field-deposit_group'), 'ghost')
      await who.merchant.refresh()
      assert.equal(who.merchant.depositGroup, 'test-group')
      await page.locator('#field-deposit_group').scrollIntoViewIfNeeded()
      await screenshot(page, 'merchant-group-refused')

      // The chosen group is saved.
      await page.selectOption('#field-deposit_group', 'vip')
      await page.fill('#field-comment', 'move to vip')
      await submit(page, '#merchant-settings-form button[type=submit]')
      await who.merchant.refresh()
      assert.equal(who.merchant.depositGroup, 'vip')

      // A group set before its accounts exist stays selectable, and the page says so.
      const { actor } = await operatorActor('cli-admin@example.com', 'admin')
      await configureMerchant(
        { merchant_id: who.merchantId, deposit_group: 'later', comment: 'x' },
        actor
      )
      await page.goto(adminUrl(`/merchants/${who.merchantId}`))
      assert.equal(await page.inputValue('#field-deposit_group'), 'later')
      assert.include(
        await text(page, '#field-deposit_group'),
        'later (no deposit account has this group)'
      )
      // Saving another setting keeps it.
      await page.fill('#field-order_ttl_seconds', '1200')
      await page.fill('#field-comment', 'longer')
      await submit(page, '#merchant-settings-form button[type=submit]')
      await who.merchant.refresh()
      assert.equal(who.merchant.depositGroup, 'later')
      assert.equal(who.merchant.orderTtlSeconds, 1200)

      // Operators and viewers read the group; they have no form.
      for (const role of ['operator', 'viewer'] as const) {
        await pages[role].goto(adminUrl(`/merchants/${who.merchantId}`))
        assert.equal(await pages[role].locator('#field-deposit_group').count(), 0, role)
        assert.include(await text(pages[role], '#merchant-settings'), 'later', role)
      }
    })

    test('an approval card shows the order, the slip’s verification and amount and who reviewed it; a reused slip names the order by platform_order_id', async ({
      assert,
    }) => {
      const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
      await createDepositAccount({ channel: 'transfer' })
      await configurePlatform({ code: 'test', four_eyes_threshold: '1000.00' }, cliActor())
      const order = await transferOrder(who, '1500.00')
      // The customer sends 1,499.00 through the sandbox bank: its slip is read, 1.00 short.
      const paid = await sandboxPay(
        { platform_order_id: order.platformOrderId, amount: '1499.00' },
        TEST_ACTOR
      )
      const image = await readFile(paid.slipPath)
      await rm(paid.slipPath, { force: true })
      const { slip } = await uploadSlip({
        order: await PaymentOrder.findOrFail(order.id),
        image,
        source: 'payment_page',
        actor: { name: 'customer' },
      })
      const carol = await operatorActor('carol@example.com')
      await reviewSlip(
        {
          slip_id: slip.id,
          decision: 'approve',
          reason_code: 'slip_verified',
          comment: 'checked',
          amount_policy: 'credit_received',
        },
        carol.actor
      )
      const request = await ApprovalRequest.query()
        .where('target_id', order.platformOrderId)
        .firstOrFail()

      // The same slip again, on another order.
      const other = await transferOrder(who, '1499.00')
      const { slip: reused } = await uploadSlip({
        order: other,
        image,
        source: 'payment_page',
        actor: { name: 'customer' },
      })

      const pages = await signInEveryRole('cards')
      const transfer = (order.transferAmount / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
      for (const [role, page] of Object.entries(pages)) {
        await page.goto(adminUrl('/review/approvals'))
        const facts = await text(page, `#approval-facts-${request.id}`)
        assert.include(facts, order.platformOrderId, role)
        assert.include(facts, who.merchantId, role)
        assert.include(facts, 'Amount requested 1,500.00 THB', role)
        assert.include(facts, `transfer_amount ${transfer} THB`, role)
        // The slip's verification result, on the card's slip line.
        assert.include(
          await text(page, `#approval-receipt-${request.id} .approval-slip`),
          slip.verificationStatus,
          role
        )
        const said = (slip.verification?.facts as { amount?: number } | undefined)?.amount
        assert.include(
          facts,
          typeof said === 'number'
            ? `Slip says sent ${(said / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} THB`
            : 'Slip says sent not read from the slip',
          role
        )
        assert.include(facts, 'Slip reviewed by carol@example.com', role)
        assert.equal(
          await page
            .locator(
              `#approval-facts-${request.id} a[href="/admin/orders/${order.platformOrderId}"]`
            )
            .count(),
          1,
          role
        )
        assert.include(await text(page, `#approval-${request.id} .amount`), '1,500.00 THB', role)

        // The reuse names the first order by its platform_order_id, linked; never its internal id.
        await page.goto(adminUrl(`/orders/${other.platformOrderId}`))
        if (process.env.DEBUG_FRICTION) {
          console.log(JSON.stringify(reused.verification).slice(0, 3000))
          console.log((await page.locator('body').innerText()).slice(0, 4000))
        }
        const checks = await text(page, `#slip-${reused.id} .slip-checks`)
        assert.include(
          checks,
          `slip of ${order.platformOrderId} (merchant ${who.merchantId})`,
          role
        )
        assert.notInclude(checks, `payment ${order.id}`, role)
        assert.equal(
          await page
            .locator(
              `#slip-${reused.id} .slip-checks a.reuse-order[href="/admin/orders/${order.platformOrderId}"]`
            )
            .count(),
          1,
          role
        )
      }
      await pages.admin.goto(adminUrl('/review/approvals'))
      await screenshot(pages.admin, 'approval-card-facts')
      await pages.admin.goto(adminUrl(`/orders/${other.platformOrderId}`))
      await pages.admin.locator(`#slip-${reused.id}`).scrollIntoViewIfNeeded()
      await screenshot(pages.admin, 'slip-reuse-order-label')
    })

    test('a platform request shows the setting now and the value asked for', async ({ assert }) => {
      await createDepositMerchant()
      await configurePlatform({ code: 'test', four_eyes_threshold: '1000.00' }, cliActor())
      const dana = await operatorActor('dana@example.com', 'admin')
      await configurePlatform(
        { code: 'test', four_eyes_threshold: '50000.00', comment: 'fewer second looks' },
        dana.actor
      )
      const request = await ApprovalRequest.query()
        .where('action', 'platform.four_eyes_threshold')
        .firstOrFail()
      const pages = await signInEveryRole('setting')
      for (const [role, page] of Object.entries(pages)) {
        await page.goto(adminUrl('/review/approvals'))
        const facts = await text(page, `#approval-facts-${request.id}`)
        assert.include(facts, 'four_eyes_threshold', role)
        assert.include(facts, 'Now 1,000.00 THB', role)
        assert.include(facts, 'Requested 50,000.00 THB', role)
      }
    })

    test('recovery codes: copied to the clipboard and downloaded as a .txt, for every role; gone once the page is left', async ({
      assert,
    }) => {
      for (const role of ['admin', 'operator', 'viewer'] as const) {
        const link = await createOperator(`codes-${role}@example.com`, role)
        const context = await newContext({
          ...LAPTOP,
          acceptDownloads: true,
          permissions: ['clipboard-read', 'clipboard-write'],
        })
        contexts.push(context)
        const page = await context.newPage()
        await choosePassword(page, link)
        const secret = (await page.locator('#totp-secret').innerText()).trim()
        await page.fill('#field-code', totpFor(secret))
        await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
        const codes = (await page.locator('#recovery-codes li').allInnerTexts()).map((c) =>
          c.trim()
        )
        assert.lengthOf(codes, 10, role)

        await page.click('#copy-codes')
        await page.locator('#codes-status', { hasText: 'Copied' }).waitFor()
        const copied: string = await page.evaluate(`navigator.clipboard.readText()`)
        assert.deepEqual(copied.split('\n'), codes, role)

        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.click('#download-codes'),
        ])
        assert.match(download.suggestedFilename(), /^recovery-codes-codes-.*\.txt$/, role)
        const file = await readFile((await download.path())!, 'utf8')
        for (const code of codes) assert.include(file, `\n${code}\n`, role)
        assert.include(file, `codes-${role}@example.com`, role)
        if (role === 'operator') await screenshot(page, 'recovery-codes')

        // Shown once: afterwards the page has nothing to give.
        await Promise.all([page.waitForNavigation(), page.click('text=I have saved them')])
        await page.goto(adminUrl('/recovery-codes'))
        assert.equal(await page.locator('#recovery-codes').count(), 0, role)
      }
    })
  }
)
