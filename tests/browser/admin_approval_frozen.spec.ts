import { test } from '@japa/runner'
import type { BrowserContext, Page } from 'playwright-core'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { freezePayment } from '#payments/actions/freeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { verifyLedger } from '#ledger/verify'
import { cliActor } from '#core/actor'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
  removeSlipImages,
} from '#tests/helpers/decisions'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

/**
 * A mark-paid request approved in the back-office after its order was
 * frozen: the approver is told why (who froze it, unfreeze first), nothing
 * is paid and the request stays in the queue.
 */

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function flash(page: Page) {
  return (await page.locator('.flash').allInnerTexts()).join(' | ')
}

test.group('back-office approval of a frozen order (browser)', (group) => {
  const contexts: BrowserContext[] = []

  group.each.setup(async () => {
    await resetDatabase()
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(async () => {
    await removeSlipImages()
    await closeBrowser()
  })
  group.each.timeout(180_000)

  test('the approver of a mark-paid request on a frozen order sees why it is refused; nothing is paid', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    await configurePlatform({ code: 'test', four_eyes_threshold: '50.00' }, cliActor())
    const order = await createPayment(who, '100.00')
    const alice = await operatorActor('alice@example.com', 'operator')
    const carol = await operatorActor('carol@example.com', 'operator')
    const asked = await markPaymentPaid(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'seen_on_statement',
        comment: 'credit seen in the KBank portal',
      },
      alice.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    const request = asked.request!
    await freezePayment(
      {
        platform_order_id: order.platformOrderId,
        reason_code: 'suspected_fraud',
        comment: 'payer on the fraud list',
      },
      carol.actor
    )

    const session = await signedInAs('bob@example.com', 'operator')
    contexts.push(session.context)
    const bob = session.page
    await bob.goto(adminUrl('/review/approvals'))
    // The card says so before anyone tries.
    assert.include(
      await bob.locator(`#approval-frozen-${request.id}`).innerText(),
      `Payment ${order.platformOrderId} is frozen`
    )
    await bob.selectOption(
      `#approve-form-${request.id} select[name=reason_code]`,
      'evidence_checked'
    )
    await bob.fill(`#approve-form-${request.id} input[name=comment]`, 'Checked the portal')
    await submit(bob, `#approve-request-${request.id}`)

    const shown = await flash(bob)
    assert.include(shown, `${order.platformOrderId} is frozen (by carol@example.com at `)
    assert.include(shown, 'unfreeze it before approving')
    assert.include(shown, `approval request #${request.id} stays pending`)
    assert.notInclude(shown, 'Nothing was saved')
    await screenshot(bob, 'review-approval-frozen')
    // Still in the queue, still approvable once the order is unfrozen.
    assert.equal(await bob.locator(`#approve-request-${request.id}`).count(), 1)

    await order.refresh()
    assert.equal(order.status, 'freeze')
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'pending')
    assert.lengthOf(await postingsOf(order), 0)
    assert.lengthOf(await callbackRowsOf(order), 0)
    assert.lengthOf((await verifyLedger()).drifts, 0)
  })
})
