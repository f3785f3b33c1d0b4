import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext } from 'playwright-core'
import { expirePayment } from '#payments/actions/expire_payment'
import { readMerchantBalance } from '#ledger/ledger'
import { verifyLedger } from '#ledger/verify'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { createPayment } from '#tests/helpers/decisions'
import { lineRow, receiveLine } from '#tests/helpers/lines'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

test.group('back-office: statement line queue', (group) => {
  let context: BrowserContext | undefined

  group.each.setup(async () => {
    await resetDatabase()
  })
  group.each.teardown(async () => {
    await context?.close()
    context = undefined
  })
  group.teardown(() => closeBrowser())

  test('a late line attached to its expired order credits the merchant once, even submitted twice', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount()
    const order = await createPayment(who, '1500.00')
    assert.isTrue(await expirePayment(order.id, DateTime.utc().plus({ days: 1 })))
    await order.refresh()
    const late = await receiveLine(account.id, {
      amount: order.transferAmount,
      reference: order.paymentReference ?? order.platformOrderId,
      description: `TR FROM KTB 4021887563 NARIN SUKSAWAT ${order.paymentReference ?? ''}`.trim(),
    })
    assert.equal(late.status, 'late')
    // Other lines waiting, as a real morning looks: a wrong amount, an unknown deposit, an old one.
    const earlier = DateTime.utc().minus({ days: 2 }).toJSDate()
    await receiveLine(account.id, {
      amount: 49_950,
      lineAt: earlier,
      description: 'TR FROM SCB 1129004512 PRANEE WONGSA',
    })
    await receiveLine(account.id, {
      amount: 2_000_00,
      description: 'TR FROM KBANK 0638815520 SOMCHAI JAIDEE',
    })
    await db
      .from('statement_lines')
      .where('line_at', '<', DateTime.utc().minus({ days: 1 }).toJSDate())
      .update({ created_at: DateTime.utc().minus({ hours: 30 }).toJSDate() })

    const signedIn = await signedInAs('ops@example.com', 'operator')
    context = signedIn.context
    const page = signedIn.page

    await page.goto(adminUrl('/review/lines'))
    assert.equal(await page.locator('#lines-table tbody tr').count(), 3)
    assert.include(await page.locator(`#line-row-${late.id}`).innerText(), 'late')
    assert.include(await page.locator(`#line-row-${late.id}`).innerText(), order.platformOrderId)
    assert.include(await page.locator('.review-tabs a.active').innerText(), 'Statement lines')
    // Take the late line: "mine" shows it alone.
    await page.check(`#line-row-${late.id} input[name=ids]`)
    await page.click('#bulk-assign-me')
    await page.goto(adminUrl('/review/lines?mine=1'))
    assert.equal(await page.locator('#lines-table tbody tr').count(), 1)
    assert.include(
      await page.locator(`#line-row-${late.id} .holder`).innerText(),
      'ops@example.com'
    )
    await page.goto(adminUrl('/review/lines'))
    await screenshot(page, 'review-lines')

    await page.goto(adminUrl(`/review/lines/${late.id}`))
    assert.include(await page.locator('#line-note').innerText(), order.platformOrderId)
    assert.equal(await page.inputValue('#attach-platform_order_id'), order.platformOrderId)
    assert.equal(await page.inputValue('#return-account_no'), '4021887563')
    assert.equal(await page.inputValue('#return-account_name'), 'NARIN SUKSAWAT')
    assert.equal(await page.locator(`#candidate-${order.platformOrderId}`).count(), 1)
    await page.selectOption('#attach-reason_code', 'late_payment')
    await page.fill(
      '#attach-comment',
      'Customer paid 20 minutes after expiry; statement shows the reference.'
    )

    // Two real submits of the same form (same page, same CSRF token) at once.
    // Runs in the page (a string: the test's own TypeScript has no DOM types).
    const statuses: string[] = await page.evaluate(`(async () => {
      const form = document.getElementById('attach-form')
      const send = () =>
        fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)), redirect: 'manual' })
      const answers = await Promise.all([send(), send()])
      return answers.map((answer) => String(answer.status || answer.type))
    })()`)
    assert.lengthOf(statuses, 2)
    // And the button, once more, on the same page.
    await page.click('#attach-submit')
    await page.waitForLoadState()

    const postings = await db
      .from('ledger_transactions')
      .where({ kind: 'payment_late', reference_id: order.platformOrderId })
    assert.lengthOf(postings, 1)
    const fee = Math.round((order.amount * 150) / 10_000)
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, order.amount - fee)
    await order.refresh()
    assert.equal(order.status, 'error')
    const row = await lineRow(late.id)
    assert.equal(row.decision, 'attached')
    assert.lengthOf(
      await db.from('queue_assignments').where({ queue: 'lines', item_id: String(late.id) }),
      0
    )
    // The last click is told, beside the Attach form, that it was done: by this operator, when.
    assert.match(
      await page.locator('#attach-refusal.flash.notice').innerText(),
      new RegExp(
        `^statement line #${late.id} was already attached by you at \\d{2}:\\d{2} \\(GMT\\+7\\); nothing more to do$`
      )
    )

    await page.goto(adminUrl(`/review/lines/${late.id}`))
    assert.include(await page.locator('#line-decided').innerText(), 'attached')
    assert.equal(await page.locator('#attach-form').count(), 0)
    await page.goto(adminUrl('/review/lines'))
    assert.equal(await page.locator('#lines-table tbody tr').count(), 2)
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a refused decision keeps the input beside its field; bulk credit gives a result per line', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    const one = await receiveLine(account.id, { amount: 30_000 })
    const two = await receiveLine(account.id, { amount: 40_000 })
    const signedIn = await signedInAs('ops2@example.com', 'operator')
    context = signedIn.context
    const page = signedIn.page

    await page.goto(adminUrl(`/review/lines/${one.id}`))
    await page.fill('#credit-merchant_id', 'NOPE1')
    await page.fill('#credit-comment', 'claimed by phone')
    await page.click('#credit-submit')
    await page.waitForLoadState()
    assert.include(await page.locator('#credit-form .error').innerText(), 'No merchant')
    assert.equal(await page.inputValue('#credit-comment'), 'claimed by phone')

    await page.goto(adminUrl('/review/lines'))
    await page.check(`#line-row-${one.id} input[name=ids]`)
    await page.check(`#line-row-${two.id} input[name=ids]`)
    await page.selectOption('#bulk-decision', 'credit')
    await page.fill('#bulk-merchant', who.merchant.merchantId)
    await page.selectOption('#bulk-reason_code', 'merchant_claimed')
    await page.fill('#bulk-comment', 'merchant sent both slips')
    await page.click('#bulk-resolve')
    await page.waitForLoadState()
    const results = await page.locator('.bulk-results li').allInnerTexts()
    assert.lengthOf(results, 2)
    assert.equal((await readMerchantBalance(who.merchant.id)).balance, 70_000 - 700)
    assert.equal(await page.locator('#lines-table tbody tr td.muted').count(), 1, 'queue empty')
  })
})
