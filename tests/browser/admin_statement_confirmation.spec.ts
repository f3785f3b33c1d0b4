import { test } from '@japa/runner'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import { formatAmount } from '#core/money'
import { GATEWAY_ZONE } from '#core/clock'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  updatePlatforms,
} from '#tests/helpers/merchants'
import { createPayment } from '#tests/helpers/decisions'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

/**
 * A statement uploaded by hand above the four-eyes threshold: the importer
 * sees it wait (and may only withdraw it), a viewer reads it, a second
 * operator reads the period, totals, continuity and what it would pay, and
 * confirms it; or turns it down, and the file stays, discarded.
 */

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).innerText()).replace(/\s+/g, ' ').trim()

test.group('back-office statement confirmation (browser)', (group) => {
  const contexts: BrowserContext[] = []
  const leftovers: string[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
    await Promise.all(leftovers.splice(0).map((path) => rm(path, { recursive: true, force: true })))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  async function signedIn(email: string, role: 'operator' | 'viewer') {
    const session = await signedInAs(email, role)
    contexts.push(session.context)
    return session.page
  }

  /** A hand-made file: a credit naming the order, with the bank's running balance. */
  async function fileFor(order: PaymentOrder) {
    const dir = await mkdtemp(join(tmpdir(), 'gw-confirm-'))
    leftovers.push(dir)
    const path = join(dir, 'kbiz-today.csv')
    const at = DateTime.utc().minus({ minutes: 1 }).setZone(GATEWAY_ZONE)
    const amount = formatAmount(order.transferAmount)
    await writeFile(
      path,
      'date_time,direction,amount,reference,description,trans_ref,balance\n' +
        `${at.toFormat('yyyy-LL-dd HH:mm:ss')},credit,${amount},${order.paymentReference ?? order.platformOrderId},FROM SOMCHAI,KBZ0001,${formatAmount(order.transferAmount + 1_000_000)}\n`
    )
    return path
  }

  test('the importer sees the file wait; a viewer reads it; a second operator confirms it and the order is paid', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, '2500.00')
    const path = await fileFor(order)

    const importer = await signedIn('importer@example.com', 'operator')
    await importer.goto(adminUrl('/statements'))
    await importer.selectOption('#field-deposit_account_id', String(account.id))
    await importer.setInputFiles('#field-file', path)
    await submit(importer, '#statement-upload')
    assert.match(importer.url(), /\/admin\/statements\/imports\/\d+$/)
    assert.match(
      await text(importer, '.flash.warning'),
      /above a platform's four-eyes threshold: nothing is matched until a second operator confirms it/
    )
    assert.equal(await text(importer, '#import-status'), 'waiting for a second operator')
    assert.match(await text(importer, '#facts-credits'), /^1 · 2,500\.\d\d THB$/)
    assert.match(await text(importer, '#facts-continuity'), /first statement with balances/)
    assert.match(await text(importer, '#would-move'), new RegExp(`pays ${order.platformOrderId}`))
    assert.match(await text(importer, '#moves-by-platform'), /above/)
    // The importer may withdraw, never approve.
    assert.equal(await importer.locator('#confirmation-request .approve').count(), 0)
    assert.match(await text(importer, '#confirmation-request'), /You asked for this request/)
    await screenshot(importer, 'statement-confirmation-importer')

    const viewer = await signedIn('viewer@example.com', 'viewer')
    await viewer.goto(importer.url())
    assert.match(await text(viewer, '#import-confirmation'), /waiting for a second operator/)
    assert.equal(await viewer.locator('#confirmation-request form').count(), 0)
    await screenshot(viewer, 'statement-confirmation-viewer')

    const second = await signedIn('second@example.com', 'operator')
    await second.goto(importer.url())
    await screenshot(second, 'statement-confirmation-second-operator')
    await second.fill('#confirmation-request .approve input[name=comment]', 'seen in KBiz')
    await submit(second, '#confirmation-request .approve')
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'unsettled_paid')
    await second.goto(importer.url())
    assert.equal(await second.locator('#import-confirmation').count(), 0)
    assert.equal(await text(second, '#count-matched'), '1')
    const [imported] = await db.from('statement_imports')
    assert.equal(imported.status, 'confirmed')
  })

  test('turned down by a second operator: the file is discarded, its lines stay on its page, the order stays open', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await updatePlatforms({ fourEyesThreshold: 10_000 })
    const account = await createDepositAccount({ channel: 'qr' })
    const order = await createPayment(who, '2500.00')
    const path = await fileFor(order)

    const importer = await signedIn('importer@example.com', 'operator')
    await importer.goto(adminUrl('/statements'))
    await importer.selectOption('#field-deposit_account_id', String(account.id))
    await importer.setInputFiles('#field-file', path)
    await submit(importer, '#statement-upload')
    const url = importer.url()

    const second = await signedIn('second@example.com', 'operator')
    await second.goto(url)
    await second.selectOption('#confirmation-request .reject select', 'insufficient_evidence')
    await second.fill('#confirmation-request .reject input[name=comment]', 'not in the bank portal')
    await submit(second, '#confirmation-request .reject')
    await second.goto(url)
    assert.equal(await text(second, '#import-status'), 'discarded')
    assert.match(await text(second, '#discarded-by'), /not in the bank portal/)
    assert.match(await text(second, '#waiting-lines'), /discarded/)
    await screenshot(second, 'statement-confirmation-discarded')
    await second.goto(adminUrl('/statements'))
    assert.match(await text(second, '#imports-table'), /discarded/)
    assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'open')
  })
})
