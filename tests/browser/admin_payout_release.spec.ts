import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PayoutOrder from '#payouts/models/payout_order'
import ApprovalRequest from '#approvals/models/approval_request'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { verifyLedger } from '#ledger/verify'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'
import {
  authBody,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'

/**
 * The payout page's release of a bulk-file payout the bank rejected: one
 * operator asks with a reason, a second approves (from the payout page or
 * the approvals queue); a viewer sees the state and no button.
 */

async function payoutAtTheBank(who: TestMerchant) {
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, {
      ...PAYOUT_FIELDS,
      amount: '250.00',
      merchant_order_id: 'REL1',
      notify_url: 'https://merchant.example.test/cb',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PayoutOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  await dispatchPayout(order.id)
  await exportBulkFile({ directory: app.tmpPath('test-payouts') }, TEST_ACTOR)
  return order.refresh()
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function text(page: Page, selector: string) {
  return (await page.locator(selector).allInnerTexts()).join(' | ')
}

test.group('back-office release of a payout the bank rejected (browser)', (group) => {
  const contexts: BrowserContext[] = []

  group.each.setup(async () => {
    await resetDatabase()
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('one operator asks with a reason, a second approves; the requester and a viewer cannot', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1000_00, {
      payoutRoute: 'bulk_file',
      withdrawFeeFlat: 10_00,
    })
    const payout = await payoutAtTheBank(who)
    assert.equal(payout.status, 'pending')
    const page = `/payouts/${payout.platformOrderId}`

    const viewerSession = await signedInAs('viewer@example.com', 'viewer')
    const aliceSession = await signedInAs('alice@example.com', 'operator')
    const bobSession = await signedInAs('bob@example.com', 'operator')
    contexts.push(viewerSession.context, aliceSession.context, bobSession.context)
    const [viewer, alice, bob] = [viewerSession.page, aliceSession.page, bobSession.page]

    // A viewer reads the bulk-file state, gets no button, and the server refuses its POST.
    await viewer.goto(adminUrl(page))
    assert.include(
      await text(viewer, '#release-at-the-bank'),
      `Its bulk file (batch ${payout.batchId}) is at the bank: the merchant's 260.00 THB stay held`
    )
    assert.equal(await viewer.locator('#release-form').count(), 0)
    await screenshot(viewer, 'payout-release-viewer')
    const forbidden = await viewer.request.post(adminUrl(`${page}/outcome`), {
      form: {
        _csrf: (await csrfToken(viewer))!,
        outcome: 'rejected',
        release_reason: 'viewer',
      },
      maxRedirects: 0,
    })
    assert.equal(forbidden.status(), 403)

    // An operator's form without its CSRF token changes nothing.
    const noToken = await alice.request.post(adminUrl(`${page}/outcome`), {
      form: { outcome: 'rejected', release_reason: 'no token' },
      maxRedirects: 0,
    })
    assert.equal(noToken.status(), 302)
    assert.lengthOf(await ApprovalRequest.all(), 0)
    await alice.goto(adminUrl(page))
    assert.include(await text(alice, '.flash.error'), 'The form had expired; nothing was saved')

    // Alice: the reason is required, beside its field.
    await alice.goto(adminUrl(page))
    assert.include(await text(alice, '#release-explained'), 'once a second operator approves')
    await screenshot(alice, 'payout-release-operator')
    await submit(alice, '#release-request')
    assert.include(await text(alice, '#error-release_reason'), 'reason is required')
    assert.equal((await payout.refresh()).status, 'pending')

    await alice.fill('#field-release_reason', 'KBank bulk report: account closed (case 4411)')
    await submit(alice, '#release-request')
    const request = await ApprovalRequest.query()
      .where('action', 'payout.release_rejected')
      .firstOrFail()
    assert.include(
      await text(alice, '.flash.success'),
      `${payout.platformOrderId}: approval request #${request.id} opened`
    )
    assert.include(await text(alice, '#release-pending'), 'Release asked by alice@example.com')
    assert.include(
      await text(alice, `#pending-request-${request.id}`),
      'You asked for this request: another operator must approve it'
    )
    assert.equal(await alice.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await alice.locator('#release-form').count(), 0)
    await screenshot(alice, 'payout-release-requested')
    assert.deepEqual(await balance(who), { balance: 740, freeze_balance: 260, unsettle_balance: 0 })

    // Her own approval, sent anyway, is refused by the server.
    const own = await alice.request.post(adminUrl(`/review/approvals/${request.id}/approve`), {
      form: { _csrf: (await csrfToken(alice))!, comment: 'me', back: `/admin${page}` },
      maxRedirects: 0,
    })
    assert.equal(own.status(), 302)
    await alice.goto(adminUrl(page))
    assert.include(
      await text(alice, '.flash.error'),
      `you asked for approval request #${request.id}: another operator must approve it`
    )
    assert.equal((await ApprovalRequest.findOrFail(request.id)).status, 'pending')

    // The viewer sees the request waiting, without buttons.
    await viewer.goto(adminUrl(page))
    assert.include(await text(viewer, '#release-pending'), 'Release asked by alice@example.com')
    assert.equal(await viewer.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await viewer.locator(`#reject-request-${request.id}`).count(), 0)
    await screenshot(viewer, 'payout-release-requested-viewer')

    // Bob finds it in the approvals queue, described, and approves it from the payout page.
    await bob.goto(adminUrl('/review/approvals'))
    const card = await text(bob, `#approval-${request.id}`)
    assert.include(
      card,
      `release payout ${payout.platformOrderId}, rejected by the bank: it fails and its hold goes back to the merchant's balance`
    )
    assert.include(card, '260.00 THB')
    assert.include(card, 'KBank bulk report: account closed (case 4411)')
    assert.include(card, who.merchantId)
    assert.equal(
      await bob.locator(`#approval-${request.id} a.target`).getAttribute('href'),
      `/admin${page}`
    )
    await screenshot(bob, 'payout-release-queue')
    await bob.goto(adminUrl(page))
    assert.include(await text(bob, `#pending-request-${request.id}`), 'alice@example.com')
    await screenshot(bob, 'payout-release-approver')
    await bob.selectOption(`#approve-form-${request.id} select[name=reason_code]`, 'bank_confirmed')
    await bob.fill(`#approve-form-${request.id} input[name=comment]`, 'Called KBank: rejected')
    await submit(bob, `#approve-request-${request.id}`)
    assert.include(
      await text(bob, '.flash.success'),
      `Approval request #${request.id} approved and carried out.`
    )
    assert.match(bob.url(), new RegExp(`/admin${page}$`))
    assert.include(await text(bob, '#payout-status'), 'failed')
    assert.include(await text(bob, '#payout-facts'), 'rejected_by_bank')
    assert.include(
      await text(bob, '#release-not-offered'),
      `${payout.platformOrderId} is already failed (rejected_by_bank)`
    )
    assert.include(await text(bob, '#payout-timeline'), 'the bank rejected it')
    await screenshot(bob, 'payout-release-approved')

    await payout.refresh()
    assert.equal(payout.status, 'failed')
    assert.equal(payout.holdState, 'returned')
    assert.deepEqual(await balance(who), { balance: 1000, freeze_balance: 0, unsettle_balance: 0 })
    assert.deepEqual((await verifyLedger()).drifts, [])
    const callbacks = await db
      .from('callback_outbox')
      .where({ order_type: 'withdraw', order_id: payout.id })
    assert.deepEqual(
      callbacks.map((row) => row.status),
      ['FAIL']
    )
  })
})
