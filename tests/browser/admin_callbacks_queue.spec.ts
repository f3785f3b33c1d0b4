import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext } from 'playwright-core'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
} from '#tests/helpers/merchants'
import { createPayment } from '#tests/helpers/decisions'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * The failed-callbacks queue in headless Chromium: callbacks given up after
 * their attempts are listed oldest first, resent in bulk with a reason (one
 * result per order, a new series each, audited), and leave the queue; a
 * viewer reads it but the server refuses their resend.
 */

/** A paid payment whose PAID callback was given up on `hoursAgo` hours ago. */
async function givenUp(who: Awaited<ReturnType<typeof createDepositMerchant>>, hoursAgo: number) {
  const order = await createPayment(who, '150.00')
  await sandboxPay({ platform_order_id: order.platformOrderId }, TEST_ACTOR)
  const at = DateTime.utc().minus({ hours: hoursAgo }).toJSDate()
  // The state five failed attempts leave behind (delivery itself is tested in callbacks.spec.ts).
  await db.from('callback_outbox').where('platform_order_id', order.platformOrderId).update({
    state: 'failed',
    attempts: 5,
    last_attempt_at: at,
    last_http_status: 502,
    last_error: 'HTTP 502 from the merchant',
  })
  return order.platformOrderId
}

test.group('back-office failed-callbacks queue (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(async () => {
    await resetDatabase()
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(async () => closeBrowser())
  group.each.timeout(120_000)

  test('resend in bulk with a reason: one result per order, a new series each, audited; a viewer cannot', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const old = await givenUp(who, 30)
    const recent = await givenUp(who, 2)
    const untouched = await givenUp(who, 1)

    const operator = await signedInAs('ops@example.com', 'operator')
    contexts.push(operator.context)
    const page = operator.page
    await page.goto(adminUrl('/review/callbacks'))
    const order = await page
      .locator('#callbacks-table tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.id))
    assert.deepEqual(
      order,
      [old, recent, untouched].map((id) => `callback-${id}-PAID`)
    )
    assert.include(await page.locator(`#callback-${old}-PAID .age`).innerText(), '1 d')
    assert.include(
      await page.locator(`#callback-${old}-PAID .age`).getAttribute('class'),
      'age-old'
    )
    await screenshot(page, 'review-callbacks')

    // No comment: refused beside the field, nothing resent.
    await page.check(`input[name=ids][value="${old}"]`)
    await Promise.all([page.waitForNavigation(), page.click('#bulk-resend')])
    assert.include(await page.locator('.flash.error').innerText(), 'A comment is required')
    assert.lengthOf(await db.from('callback_outbox').where('state', 'failed'), 3)

    await page.check(`input[name=ids][value="${old}"]`)
    await page.check(`input[name=ids][value="${recent}"]`)
    await page.selectOption('#bulk-reason_code', 'merchant_endpoint_fixed')
    await page.fill('#bulk-comment', 'Merchant fixed their TLS certificate')
    await Promise.all([page.waitForNavigation(), page.click('#bulk-resend')])
    const results = await page.locator('.bulk-results li').allInnerTexts()
    assert.lengthOf(results, 2)
    assert.isTrue(
      results.every((line) => line.includes('resent')),
      results.join(' | ')
    )

    const rows = await db.from('callback_outbox').orderBy('id')
    const byOrder = new Map(rows.map((row) => [row.platform_order_id, row]))
    for (const id of [old, recent]) {
      assert.notEqual(byOrder.get(id).state, 'failed')
      assert.equal(byOrder.get(id).series, 1)
    }
    assert.equal(byOrder.get(untouched).state, 'failed')
    const audits = await db.from('audit_logs').where('action', 'callback.resend').orderBy('id')
    assert.deepEqual(
      audits.map((row) => [row.subject_id, row.reason_code, row.comment, row.actor]),
      [old, recent].map((id) => [
        id,
        'merchant_endpoint_fixed',
        'Merchant fixed their TLS certificate',
        'operator:ops@example.com',
      ])
    )
    // Only the untouched one is still listed.
    await page.goto(adminUrl('/review/callbacks'))
    assert.equal(await page.locator('#callbacks-table tbody tr').count(), 1)

    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    await viewer.page.goto(adminUrl('/review/callbacks'))
    assert.equal(await viewer.page.locator('#bulk-resend').count(), 0)
    const refused = await viewer.page.request.post(adminUrl('/review/callbacks/resend'), {
      form: {
        _csrf: (await csrfToken(viewer.page)) ?? '',
        ids: untouched,
        reason_code: 'other',
        comment: 'x',
      },
      maxRedirects: 0,
    })
    assert.equal(refused.status(), 403)
    assert.equal(
      (await db.from('callback_outbox').where('platform_order_id', untouched).first()).state,
      'failed'
    )
  })
})
