import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { freezePayment } from '#payments/actions/freeze_payment'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { rejectRequest } from '#approvals/actions/reject_request'
import { expirePayment, sweepExpiredPayments } from '#payments/actions/expire_payment'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { verifyLedger } from '#ledger/verify'
import { cliActor } from '#core/actor'
import { formatAmount, formatThb } from '#core/money'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
} from '#tests/helpers/merchants'
import {
  attachSlip,
  callbackRowsOf,
  createPayment,
  operatorActor,
  postingsOf,
  removeSlipImages,
} from '#tests/helpers/decisions'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * The review queues in headless Chromium against the real HTTPS server and
 * MariaDB: slips uploaded through the upload action (the sandbox bank's
 * slip), decided on their page, approved by a second operator; freezing from
 * the order page; a viewer who reads but cannot act.
 */

const LATER = () => DateTime.utc().plus({ days: 1 })

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function flash(page: Page) {
  return (await page.locator('.flash').allInnerTexts()).join(' | ')
}

test.group('back-office review queues (browser)', (group) => {
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

  async function signIn(email: string, role: 'admin' | 'operator' | 'viewer') {
    const session = await signedInAs(email, role)
    contexts.push(session.context)
    return session.page
  }

  test('a flagged slip, approved above the threshold, is paid once a second operator approves; the requester cannot approve', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 100 })
    await createDepositAccount()
    await configurePlatform({ code: 'test', four_eyes_threshold: '50.00' }, cliActor())
    const order = await createPayment(who, '1250.00')
    const slip = await attachSlip(order)
    // Other slips waiting, and a credit 0.40 THB off the order's amount on its account nearby.
    const second = await createPayment(who, '80.00')
    const secondSlip = await attachSlip(second, 'merchant_api')
    const third = await createPayment(who, '320.00')
    const thirdSlip = await attachSlip(third)
    await db
      .from('payment_slips')
      .where('id', thirdSlip.id)
      .update({ created_at: DateTime.utc().minus({ hours: 5 }).toJSDate() })
    await sandboxPay(
      { platform_order_id: order.platformOrderId, amount: formatAmount(order.transferAmount + 40) },
      TEST_ACTOR
    )

    // An earlier request another operator turned down.
    const earlier = await createPayment(who, '640.00')
    const dave = await operatorActor('dave@example.com')
    const erin = await operatorActor('erin@example.com')
    const asked = await markPaymentPaid(
      {
        platform_order_id: earlier.platformOrderId,
        reason_code: 'bank_confirmed',
        comment: 'Customer sent a bank letter',
      },
      dave.actor
    )
    assert.equal(asked.outcome, 'approval_requested')
    await rejectRequest(
      {
        approval_request_id: asked.request!.id,
        reason_code: 'insufficient_evidence',
        comment: 'The letter names another account',
      },
      erin.actor
    )

    const alice = await signIn('alice@example.com', 'operator')
    await alice.goto(adminUrl('/review'))
    assert.match(alice.url(), /\/admin\/review\/frozen$/)
    await alice.goto(adminUrl('/review/slips'))
    const listed = await alice
      .locator('#slips-table tbody tr[id^=slip-row-]')
      .evaluateAll((rows) => rows.map((row) => row.id))
    // Oldest first: the slip uploaded five hours ago leads.
    assert.deepEqual(listed, [
      `slip-row-${thirdSlip.id}`,
      `slip-row-${slip.id}`,
      `slip-row-${secondSlip.id}`,
    ])
    assert.include(
      await alice.locator(`#slip-row-${thirdSlip.id} .age`).getAttribute('class'),
      'age-aging'
    )

    // Take two slips; "Mine" lists them only.
    await alice.check(`#slip-row-${slip.id} input[name=ids]`)
    await alice.check(`#slip-row-${thirdSlip.id} input[name=ids]`)
    await submit(alice, '#bulk-assign-me')
    assert.include(await flash(alice), 'Assignment: 2 done, 0 refused')
    assert.equal(
      await alice.locator(`#slip-row-${slip.id} .holder`).innerText(),
      'alice@example.com'
    )
    await alice.goto(adminUrl('/review/slips?mine=1'))
    assert.equal(await alice.locator('#slips-table tbody tr[id^=slip-row-]').count(), 2)
    await alice.goto(adminUrl('/review/slips'))
    await screenshot(alice, 'review-slips')

    // The decision page: image, the order, nearby lines, forensics.
    await alice.click(`#slip-row-${slip.id} a:has-text("Review")`)
    await alice.waitForURL(`**/admin/review/slips/${slip.id}`)
    assert.isTrue(await alice.locator('#slip-image').evaluate((img: any) => img.naturalWidth > 0))
    assert.include(
      await alice.locator('#nearby-lines').innerText(),
      formatThb(order.transferAmount + 40)
    )
    assert.equal(await alice.locator('#slip-holder').innerText(), 'alice@example.com')
    assert.equal(await alice.locator(`#slip-${slip.id} .slip-forensics`).count(), 1)

    await alice.selectOption('#approve-reason_code', 'slip_verified')
    await alice.fill('#approve-comment', 'Slip matches the order; credit visible in the portal')
    // A comment is required: refused beside the field, nothing decided.
    await alice.fill('#approve-comment', '')
    await submit(alice, '#approve-slip')
    assert.include(await alice.locator('#approve-form .error').innerText(), 'comment')
    assert.isNull((await PaymentSlip.findOrFail(slip.id)).reviewDecision)
    await alice.selectOption('#approve-reason_code', 'slip_verified')
    await alice.fill('#approve-comment', 'Slip matches the order; credit visible in the portal')
    await submit(alice, '#approve-slip')
    assert.include(await flash(alice), 'approval request #')
    assert.equal(await alice.locator('#slip-pending').count(), 1)
    const request = await ApprovalRequest.query()
      .where('target_id', order.platformOrderId)
      .firstOrFail()
    assert.equal(request.status, 'pending')
    await order.refresh()
    assert.equal(order.status, 'open')

    // The requester sees no approve form; a forged POST is refused by the action.
    await alice.goto(adminUrl('/review/approvals'))
    assert.equal(await alice.locator(`#approve-request-${request.id}`).count(), 0)
    assert.include(
      await alice.locator(`#approval-${request.id}`).innerText(),
      'You asked for this request'
    )
    const token = await csrfToken(alice)
    const forged = await alice.request.post(adminUrl(`/review/approvals/${request.id}/approve`), {
      form: { _csrf: token!, reason_code: 'evidence_checked', comment: 'self' },
      maxRedirects: 0,
    })
    assert.equal(forged.status(), 302)
    await alice.goto(adminUrl('/review/approvals'))
    assert.include(await flash(alice), 'another operator must approve it')
    await request.refresh()
    assert.equal(request.status, 'pending')

    // Bob approves with a reason code and a comment.
    const bob = await signIn('bob@example.com', 'operator')
    await bob.goto(adminUrl('/review/approvals'))
    await bob.check(`#approval-${request.id} input[name=ids]`)
    await submit(bob, '#bulk-assign-me')
    assert.include(
      await bob.locator(`#approval-${request.id} .holder`).innerText(),
      'bob@example.com'
    )
    await bob.goto(adminUrl('/review/approvals'))
    await bob.selectOption(
      `#approve-form-${request.id} select[name=reason_code]`,
      'evidence_checked'
    )
    await bob.fill(
      `#approve-form-${request.id} input[name=comment]`,
      'Checked the slip and the portal'
    )
    await submit(bob, `#approve-request-${request.id}`)
    assert.include(await flash(bob), `Approval request #${request.id} approved`)
    assert.include(await bob.locator(`#decided-${request.id}`).innerText(), 'approved')
    assert.include(await bob.locator(`#decided-${request.id}`).innerText(), 'evidence_checked')

    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.isFalse(order.awaitingReview)
    const paidSlip = await PaymentSlip.findOrFail(slip.id)
    assert.equal(paidSlip.reviewDecision, 'approved')
    assert.lengthOf(await postingsOf(order), 1)
    const callbacks = await callbackRowsOf(order)
    assert.deepEqual(
      callbacks.map((row) => row.status),
      ['PAID']
    )
    assert.lengthOf((await verifyLedger()).drifts, 0)
    // Decided items leave their queues and their holders.
    const held = await db.from('queue_assignments').orderBy('item_id')
    assert.deepEqual(
      held.map((row) => `${row.queue}:${row.item_id}`),
      [`slips:${thirdSlip.id}`]
    )

    // Bulk reject: one reason and comment, one result per slip (a decided slip is refused).
    await bob.goto(adminUrl('/review/slips'))
    await bob.check(`#slip-row-${secondSlip.id} input[name=ids]`)
    await bob.check(`#slip-row-${thirdSlip.id} input[name=ids]`)
    await bob.selectOption('#bulk-reason_code', 'no_matching_credit')
    await bob.fill('#bulk-comment', 'No credit on the statement')
    // A slip decided meanwhile (another tab): its own refusal among the results.
    await bob.evaluate((id) => {
      const doc = (globalThis as any).document
      const input = doc.createElement('input')
      input.type = 'hidden'
      input.name = 'ids'
      input.value = String(id)
      doc.querySelector('#queue-form').appendChild(input)
    }, slip.id)
    await submit(bob, '#bulk-reject')
    const results = await bob.locator('.bulk-results li').allInnerTexts()
    assert.lengthOf(results, 3)
    assert.include(await flash(bob), 'Reject slips: 2 done, 1 refused')
    assert.isTrue(results.some((line) => line.includes(`slip ${slip.id} was approved by `)))
    assert.equal(await bob.locator('#slips-table tbody tr[id^=slip-row-]').count(), 0)
  })

  test('a viewer sees the queues and decision pages without forms; their POSTs get 403', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who, '150.00')
    const slip = await attachSlip(order)
    const frozen = await createPayment(who, '60.00')
    const { actor } = await operatorActor('ops@example.com')
    await freezePayment(
      { platform_order_id: frozen.platformOrderId, reason_code: 'investigation', comment: 'check' },
      actor
    )

    const viewer = await signIn('viewer@example.com', 'viewer')
    for (const path of ['/review/frozen', '/review/slips', '/review/approvals']) {
      const response = await viewer.goto(adminUrl(path))
      assert.equal(response?.status(), 200, path)
      assert.equal(await viewer.locator('input[name=ids]').count(), 0, path)
      assert.equal(await viewer.locator('#bulk-assign-me').count(), 0, path)
    }
    await viewer.goto(adminUrl('/review/frozen'))
    assert.equal(await viewer.locator(`#frozen-${frozen.platformOrderId}`).count(), 1)
    await viewer.goto(adminUrl(`/review/slips/${slip.id}`))
    assert.equal(await viewer.locator('#approve-form').count(), 0)
    assert.equal(await viewer.locator('#slip-undecided').count(), 1)
    await viewer.goto(adminUrl(`/orders/${frozen.platformOrderId}`))
    assert.equal(await viewer.locator('#order-decisions form').count(), 0)

    const token = await csrfToken(viewer)
    const posts: Array<[string, Record<string, string>]> = [
      [
        `/review/slips/${slip.id}/decide`,
        { decision: 'reject', reason_code: 'other', comment: 'x' },
      ],
      ['/review/slips/reject', { ids: String(slip.id), reason_code: 'other', comment: 'x' }],
      ['/queues/assign', { queue: 'slips', ids: String(slip.id), to: 'me' }],
      [`/orders/${frozen.platformOrderId}/unfreeze`, { reason_code: 'other', comment: 'x' }],
      [`/orders/${order.platformOrderId}/freeze`, { reason_code: 'other', comment: 'x' }],
      [`/orders/${order.platformOrderId}/mark-paid`, { reason_code: 'other', comment: 'x' }],
      ['/review/approvals/1/approve', { comment: 'x' }],
    ]
    for (const [path, form] of posts) {
      const response = await viewer.request.post(adminUrl(path), {
        form: { _csrf: token!, ...form },
        maxRedirects: 0,
      })
      assert.equal(response.status(), 403, path)
    }
    await order.refresh()
    await frozen.refresh()
    assert.equal(order.status, 'open')
    assert.equal(frozen.status, 'freeze')
    assert.isNull((await PaymentSlip.findOrFail(slip.id)).reviewDecision)
  })

  test('freezing from the order page stops expiry; the frozen queue lists it; unfreezing lets it expire', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createPayment(who, '420.00')
    const older = await createPayment(who, '99.00')
    const { actor } = await operatorActor('ops@example.com')
    await freezePayment(
      {
        platform_order_id: older.platformOrderId,
        reason_code: 'customer_dispute',
        comment: 'Customer says they paid twice',
      },
      actor
    )
    await db
      .from('order_events')
      .where({ order_type: 'payment', order_id: older.id, to_status: 'freeze' })
      .update({ created_at: DateTime.utc().minus({ hours: 26 }).toJSDate() })

    const carol = await signIn('carol@example.com', 'operator')
    await carol.goto(adminUrl(`/orders/${order.platformOrderId}`))
    assert.equal(await carol.locator('#decision-unfreeze').count(), 0)
    await carol.click('#decision-freeze summary')
    await carol.selectOption('#freeze-reason_code', 'suspected_fraud')
    await carol.fill('#freeze-comment', 'Same customer account as a disputed order')
    await submit(carol, '#freeze-submit')
    assert.include(await flash(carol), 'frozen (now freeze)')
    assert.equal(await carol.locator('#order-status').innerText(), 'freeze')
    assert.equal(await carol.locator('#decision-unfreeze').count(), 1)

    // Past its expiry, the frozen order does not expire.
    await db
      .from('payment_orders')
      .where('id', order.id)
      .update({ expire_at: DateTime.utc().minus({ minutes: 5 }).toJSDate() })
    assert.isFalse(await expirePayment(order.id, LATER()))
    assert.equal(await sweepExpiredPayments(LATER()), 0)
    await order.refresh()
    assert.equal(order.status, 'freeze')

    await carol.goto(adminUrl('/review/frozen'))
    const rows = await carol
      .locator('#frozen-table tbody tr[id^=frozen-]')
      .evaluateAll((list) => list.map((row) => row.id))
    assert.deepEqual(rows, [`frozen-${older.platformOrderId}`, `frozen-${order.platformOrderId}`])
    assert.include(
      await carol.locator(`#frozen-${older.platformOrderId} .age`).getAttribute('class'),
      'age-old'
    )
    assert.include(
      await carol.locator(`#frozen-${order.platformOrderId}`).innerText(),
      'suspected_fraud'
    )
    await carol.check(`#frozen-${older.platformOrderId} input[name=ids]`)
    await submit(carol, '#bulk-assign-me')
    await screenshot(carol, 'review-frozen')
    await carol.check(`#frozen-${older.platformOrderId} input[name=ids]`)
    await submit(carol, '#bulk-give-back')
    assert.equal(await carol.locator(`#frozen-${older.platformOrderId} .holder`).innerText(), '—')

    // Unfreeze from the order page: open again, and it expires.
    await carol.click(`#frozen-${order.platformOrderId} a:has-text("Decide")`)
    await carol.click('#decision-unfreeze summary')
    await carol.selectOption('#unfreeze-reason_code', 'review_cleared')
    await carol.fill('#unfreeze-comment', 'Checked with the merchant')
    await submit(carol, '#unfreeze-submit')
    assert.include(await flash(carol), 'unfrozen (now open)')
    assert.isTrue(await expirePayment(order.id, LATER()))
    const expired = await PaymentOrder.findOrFail(order.id)
    assert.equal(expired.status, 'error')
  })
})
