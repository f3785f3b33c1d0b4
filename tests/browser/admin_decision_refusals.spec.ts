import { test } from '@japa/runner'
import type { BrowserContext, Page } from 'playwright-core'
import Operator from '#operators/models/operator'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { freezePayment } from '#payments/actions/freeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { orderTimeline } from '#core/order_events'
import { formatGatewayDateTime } from '#core/clock'
import { cliActor, type Actor } from '#core/actor'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { auditRows, createPayment, removeSlipImages } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

/**
 * The order page's decisions as each role sees them: a refusal beside the
 * action that was refused, a second submit told what the first did, the
 * pending approval request with the buttons its rules allow, and no
 * Decisions card for a viewer.
 */

const FREEZE = { reason_code: 'suspected_fraud', comment: 'payer on the fraud list' }
const PAID = { reason_code: 'seen_on_statement', comment: 'credit seen in the KBank portal' }

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function text(page: Page, selector: string) {
  return (await page.locator(selector).innerText()).trim()
}

/** The actor of an operator signed in through the browser. */
async function actorOf(email: string): Promise<Actor> {
  const operator = await Operator.findByOrFail('email', email)
  return { name: operator.actorName, operatorId: operator.id }
}

/** Opens a decision's form on the order page and fills its reason and comment. */
async function fillDecision(page: Page, key: string, reason: string, comment: string) {
  await page.click(`#decision-${key} summary`)
  await page.selectOption(`#${key}-reason_code`, reason)
  await page.fill(`#${key}-comment`, comment)
}

/** "HH:MM" of the order's freeze, Bangkok time. */
async function frozenAt(orderId: number) {
  const froze = (await orderTimeline('payment', orderId)).filter((e) => e.toStatus === 'freeze')
  return formatGatewayDateTime(froze.at(-1)!.createdAt)!.slice(11, 16)
}

test.group('back-office decisions: refusals beside the action, every role (browser)', (group) => {
  const contexts: BrowserContext[] = []
  let pages: Record<'admin' | 'operator' | 'viewer', Page>

  group.each.setup(async () => {
    await resetDatabase()
    const signed = {
      admin: await signedInAs('adam@example.com', 'admin'),
      operator: await signedInAs('olga@example.com', 'operator'),
      viewer: await signedInAs('vera@example.com', 'viewer'),
    }
    contexts.push(...Object.values(signed).map((session) => session.context))
    pages = { admin: signed.admin.page, operator: signed.operator.page, viewer: signed.viewer.page }
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(async () => {
    await removeSlipImages()
    await closeBrowser()
  })
  group.each.timeout(240_000)

  test('a pending request on the order page: Approve/Reject only for who may decide; the requester withdraws; a viewer sees no buttons and no Decisions card', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    await configurePlatform({ code: 'test', four_eyes_threshold: '50.00' }, cliActor())
    const order = await createPayment(who, '12345.00')
    const asked = await markPaymentPaid(
      { platform_order_id: order.platformOrderId, ...PAID },
      await actorOf('olga@example.com')
    )
    assert.equal(asked.outcome, 'approval_requested')
    const id = asked.request!.id
    const path = adminUrl(`/orders/${order.platformOrderId}`)

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(path)
      const card = await text(page, '#order-pending')
      assert.include(card, `#${id}`, role)
      assert.include(card, 'Asked by olga@example.com at', role)
      assert.include(card, 'expires', role)
      assert.equal(
        await page.locator('#order-pending a[href="/admin/review/approvals"]').count(),
        1,
        role
      )
      // Amounts as Thai readers write them.
      assert.include(await text(page, '#field-amount'), '12,345.00', role)
    }
    // The admin (an approver, neither requester nor slip reviewer): both buttons.
    assert.equal(await pages.admin.locator(`#approve-request-${id}`).count(), 1)
    assert.equal(await text(pages.admin, `#reject-request-${id}`), 'Reject')
    await screenshot(pages.admin, 'order-pending-request')
    // The operator who asked: Withdraw only.
    assert.equal(await pages.operator.locator(`#approve-request-${id}`).count(), 0)
    assert.equal(await text(pages.operator, `#reject-request-${id}`), 'Withdraw')
    assert.include(await text(pages.operator, '#order-pending'), 'You asked for this request')
    // The viewer: the request, no buttons, no Decisions card.
    assert.equal(await pages.viewer.locator(`#approve-request-${id}`).count(), 0)
    assert.equal(await pages.viewer.locator(`#reject-request-${id}`).count(), 0)
    assert.equal(await pages.viewer.locator('.decisions-card').count(), 0)
    assert.isFalse(await pages.viewer.locator('#order-decisions').isVisible())
    assert.isTrue(await pages.admin.locator('.decisions-card').isVisible())

    // The operator withdraws from the order page (a second tab keeps the old page): back on
    // it, the request is gone.
    const stale = await pages.operator.context().newPage()
    await stale.goto(path)
    await pages.operator.fill(`#reject-form-${id} input[name=comment]`, 'asked by mistake')
    await submit(pages.operator, `#reject-request-${id}`)
    assert.equal(new URL(pages.operator.url()).pathname, `/admin/orders/${order.platformOrderId}`)
    assert.equal((await ApprovalRequest.findOrFail(id)).status, 'rejected')
    assert.equal(await pages.operator.locator('#order-pending').count(), 0)
    // Withdrawn again from the stale tab: refused, said where the request was.
    await stale.fill(`#reject-form-${id} input[name=comment]`, 'asked by mistake')
    await submit(stale, `#reject-request-${id}`)
    assert.include(
      await text(stale, `#approval-${id}-refusal`),
      `approval request #${id} was already rejected`
    )
  })

  test('a refusal is shown beside the action that was refused, in the operator’s words; a viewer has nothing to refuse', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const order = await createPayment(who, '20.00')
    const olga = await actorOf('olga@example.com')
    await freezePayment({ platform_order_id: order.platformOrderId, ...FREEZE }, olga)
    const path = adminUrl(`/orders/${order.platformOrderId}`)

    // The admin opens the frozen order to unfreeze it; meanwhile the operator marks it paid.
    const adam = pages.admin
    await adam.goto(path)
    await fillDecision(adam, 'unfreeze', 'review_cleared', 'the bank confirmed it')
    await markPaymentPaid({ platform_order_id: order.platformOrderId, ...PAID }, olga)
    await submit(adam, '#unfreeze-submit')

    const refusal = await text(adam, '#unfreeze-refusal')
    assert.match(
      refusal,
      new RegExp(
        `^${order.platformOrderId} is no longer frozen: it was marked paid by olga@example\\.com at \\d{2}:\\d{2} \\(GMT\\+7\\); it is unsettled_paid and nothing was saved$`
      )
    )
    assert.isTrue(await adam.locator('#unfreeze-refusal.flash.error').isVisible())
    // Beside the decisions, not a bare heading on top of the page.
    assert.equal(await adam.locator('#order-decisions #unfreeze-refusal').count(), 1)
    assert.equal(await adam.locator('main > .flash.error').count(), 0)
    assert.notInclude(await text(adam, 'main'), 'please correct the fields marked below')
    await screenshot(adam, 'order-refusal-beside-action')

    // The operator, on a page still offering Freeze, freezes the now paid order: it works.
    await pages.operator.goto(path)
    assert.equal(await pages.operator.locator('#decision-freeze').count(), 1)
    // A viewer's page has no decision to refuse: no card, no form.
    await pages.viewer.goto(path)
    assert.equal(await pages.viewer.locator('.decisions-card, form[id$="-form"]').count(), 0)
  })

  test('freeze submitted twice: one freeze; the second tab is told it was frozen by you at HH:MM, as a notice; a real double click never says nothing was saved', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    const order = await createPayment(who, '1500.00')
    const path = adminUrl(`/orders/${order.platformOrderId}`)
    const olga = pages.operator

    // Two tabs of the same operator, both showing Freeze.
    const second = await olga.context().newPage()
    await olga.goto(path)
    await second.goto(path)
    await fillDecision(olga, 'freeze', FREEZE.reason_code, FREEZE.comment)
    await fillDecision(second, 'freeze', FREEZE.reason_code, FREEZE.comment)
    await submit(olga, '#freeze-submit')
    assert.include(await text(olga, 'main'), `${order.platformOrderId}: frozen (now freeze).`)
    await submit(second, '#freeze-submit')

    const notice = await text(second, '#freeze-refusal')
    assert.equal(
      notice,
      `${order.platformOrderId} was frozen by you at ${await frozenAt(order.id)} (GMT+7) (it was open); nothing more to do`
    )
    assert.isTrue(await second.locator('#freeze-refusal.flash.notice').isVisible())
    assert.equal(await second.locator('.flash.error').count(), 0)
    assert.notInclude(await text(second, 'main'), 'Nothing was saved')
    await screenshot(second, 'order-double-submit-notice')
    assert.lengthOf(await auditRows('payment.freeze'), 1)

    // The admin, who was not the one: named by email.
    await pages.admin.goto(path)
    assert.equal(await pages.admin.locator('#decision-freeze').count(), 0)

    // A real double click on another order: one freeze, and whatever page wins tells the truth.
    const other = await createPayment(who, '30.00')
    await olga.goto(adminUrl(`/orders/${other.platformOrderId}`))
    await fillDecision(olga, 'freeze', FREEZE.reason_code, FREEZE.comment)
    const orderPage = `/admin/orders/${other.platformOrderId}`
    await Promise.all([
      // The page the browser lands on after its submits: the order page again.
      olga.waitForResponse(
        (response) =>
          new URL(response.url()).pathname === orderPage && response.request().method() === 'GET'
      ),
      olga.dblclick('#freeze-submit'),
    ])
    await olga.waitForLoadState('load')
    await other.refresh()
    assert.equal(other.status, 'freeze')
    assert.lengthOf(await auditRows('payment.freeze'), 2, 'one freeze per order')
    const shown = await text(olga, 'main')
    assert.notInclude(shown, 'Nothing was saved')
    assert.isTrue(
      shown.includes(`${other.platformOrderId}: frozen (now freeze).`) ||
        shown.includes(`${other.platformOrderId} was frozen by you at`),
      shown.slice(0, 400)
    )
    assert.equal(await olga.locator('.flash.error').count(), 0)
  })

  test('the statement-line page: its pending request with the buttons each role may use; a second credit told it was done, beside Credit', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    const account = await createDepositAccount()
    await configurePlatform({ code: 'test', four_eyes_threshold: '1000.00' }, cliActor())
    const big = await receiveLine(account.id, { amount: 2_500_00 })
    const small = await receiveLine(account.id, { amount: 300_00 })
    const credit = {
      merchant_id: who.merchant.merchantId,
      reason_code: 'merchant_claimed',
      comment: 'the merchant sent the slip',
    }
    const asked = await creditMerchantFromLine(
      { statement_line_id: big.id, ...credit },
      await actorOf('olga@example.com')
    )
    assert.equal(asked.outcome, 'approval_requested')
    const id = asked.request!.id

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/lines/${big.id}`))
      const card = await text(page, '#line-pending-requests')
      assert.include(card, `#${id}`, role)
      assert.include(card, 'Asked by olga@example.com at', role)
      assert.include(card, 'expires', role)
      assert.match(await text(page, '#line-amount'), /^2,?500\.00 THB/, role)
    }
    assert.equal(await pages.admin.locator(`#approve-request-${id}`).count(), 1)
    assert.equal(await text(pages.admin, `#reject-request-${id}`), 'Reject')
    assert.equal(await pages.operator.locator(`#approve-request-${id}`).count(), 0)
    assert.equal(await text(pages.operator, `#reject-request-${id}`), 'Withdraw')
    assert.equal(await pages.viewer.locator(`#line-pending-requests form`).count(), 0)
    await screenshot(pages.admin, 'line-pending-request')

    // The operator credits the small line in one tab, then submits the same in another.
    const olga = pages.operator
    const second = await olga.context().newPage()
    for (const page of [olga, second]) {
      await page.goto(adminUrl(`/review/lines/${small.id}`))
      await page.fill('#credit-merchant_id', credit.merchant_id)
      await page.selectOption('#credit-reason_code', credit.reason_code)
      await page.fill('#credit-comment', credit.comment)
    }
    await submit(olga, '#credit-submit')
    await submit(second, '#credit-submit')
    assert.match(
      await text(second, '#credit-refusal.flash.notice'),
      new RegExp(
        `^statement line #${small.id} was already credited by you at \\d{2}:\\d{2} \\(GMT\\+7\\); nothing more to do$`
      )
    )
    assert.equal(await second.locator('.flash.error').count(), 0)
    assert.lengthOf(await auditRows('statement_line.credit'), 1)
  })
})
