import { test } from '@japa/runner'
import { readFile, rm } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import ApprovalRequest from '#approvals/models/approval_request'
import { configurePlatform } from '#merchants/actions/configure_platform'
import { uploadSlip } from '#slips/actions/upload_slip'
import { reviewSlip } from '#slips/actions/review_slip'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { creditMerchantFromLine } from '#reconciliation/actions/credit_merchant_from_line'
import { paymentCredit } from '#ledger/recipes'
import { cliActor } from '#core/actor'
import { formatAmount } from '#core/money'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { operatorActor } from '#tests/helpers/decisions'
import { sandboxSlip, sandboxTransRef } from '#tests/helpers/slips'
import { receiveLine } from '#tests/helpers/lines'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * The link between slips, statement lines, orders and claims as operators
 * see it (docs/reconciliation.md, "Bank money in the ledger"), built through
 * the real actions: the sandbox bank's transfer and its slip, slip
 * approvals, line decisions, four-eyes requests. Every page is read by an
 * admin, an operator and a viewer (who sees it all and decides nothing).
 */

const APPROVE = { decision: 'approve', reason_code: 'slip_verified', comment: 'slip checked' }
const CREDIT = { reason_code: 'merchant_claimed', comment: 'the merchant says it is theirs' }

type Role = 'admin' | 'operator' | 'viewer'

let sequence = 0
const uuids: string[] = []

/** A bank-transfer payment created through /payment/create-transfer. */
async function transferOrder(who: TestMerchant, amount: string) {
  sequence += 1
  const response = await signedPost(
    '/payment/create-transfer',
    who,
    authBody(who, {
      merchant_order_id: `BRP${sequence}`,
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

/** The customer sends `amount` through the sandbox bank, then uploads its slip on the payment page. */
async function payWithSlip(order: PaymentOrder, amount: string) {
  const paid = await sandboxPay({ platform_order_id: order.platformOrderId, amount }, TEST_ACTOR)
  const image = await readFile(paid.slipPath)
  await rm(paid.slipPath, { force: true })
  const { slip } = await uploadSlip({
    order: await PaymentOrder.findOrFail(order.id),
    image,
    source: 'payment_page',
    actor: { name: 'customer' },
  })
  const line = await db
    .from('statement_lines')
    .where('import_id', paid.summary.importId)
    .firstOrFail()
  return { slip, line: { ...line, id: Number(line.id) }, transRef: paid.transRef }
}

/** A slip naming a transfer the statement does not show yet. */
async function slipBeforeItsLine(order: PaymentOrder) {
  const transRef = sandboxTransRef()
  const { slip } = await uploadSlip({
    order,
    image: await sandboxSlip({ transRef, amount: order.transferAmount }),
    source: 'payment_page',
    actor: { name: 'customer' },
  })
  return { slip, transRef }
}

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function text(page: Page, selector: string) {
  return (await page.locator(selector).innerText()).replace(/\s+/g, ' ')
}

async function flash(page: Page) {
  return (await page.locator('.flash').allInnerTexts()).join(' | ')
}

test.group('back-office: slips, statement lines, orders and their claims (browser)', (group) => {
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

  /** One signed-in page per role. */
  async function signInEveryRole(prefix: string) {
    const pages = {} as Record<Role, Page>
    for (const role of ['admin', 'operator', 'viewer'] as const) {
      const session = await signedInAs(`${prefix}-${role}@example.com`, role)
      contexts.push(session.context)
      pages[role] = session.page
    }
    return pages
  }

  test('an underpaid transfer and its slip: the slip page links the line and asks for the amount policy; the approval, the line and the order show who took the money', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await createDepositAccount({ channel: 'transfer' })
    await configurePlatform({ code: 'test', four_eyes_threshold: '1000.00' }, cliActor())
    const order = await transferOrder(who, '1500.00')
    const { slip, line } = await payWithSlip(order, '1499.00')
    assert.equal(line.status, 'unmatched')
    const credit = paymentCredit(order, 149_900, 150)
    assert.equal(formatAmount(credit.credited), '1476.51')
    const pages = await signInEveryRole('under')
    const { operator: alice, admin: root, viewer: vera } = pages
    const lineHref = `/admin/review/lines/${line.id}`

    // The slip page, for everyone: its transfer is line #N, which nobody took yet; 1.00 short.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/slips/${slip.id}`))
      assert.equal(await page.locator(`#receipt-line a[href="${lineHref}"]`).count(), 1, role)
      const panel = await text(page, '#slip-receipt')
      assert.include(panel, `line #${line.id} · 1,499.00 THB`, role)
      assert.include(panel, 'unmatched', role)
      assert.include(await text(page, '#receipt-claim'), 'nobody', role)
      assert.include(
        await text(page, '#receipt-preview'),
        `statement line #${line.id} (1,499.00 THB`,
        role
      )
      assert.include(await text(page, '#receipt-preview'), 'carries the slip’s transRef', role)
      const received = await text(page, '#receipt-received')
      assert.include(received, '1,499.00 THB', role)
      assert.include(received, 'transfer_amount 1,500.00 THB', role)
      assert.include(received, 'differs by -1.00', role)
      // The forensics name the line that carries the transRef, never "seen nowhere else".
      const forensics = await text(page, `#slip-${slip.id} .slip-forensics`)
      assert.include(forensics, `line ${line.id}`, role)
      assert.notInclude(forensics, 'anywhere else', role)
    }
    assert.equal(await vera.locator('#approve-form').count(), 0)
    assert.equal(await vera.locator('#approve-amount_policy').count(), 0)
    assert.equal(await root.locator('#approve-amount_policy').count(), 1)

    // The operator is asked to credit what arrived, with the figure.
    assert.include(
      await text(alice, '#approve-amount-policy'),
      'Credit what was received: 1,476.51 THB after the fee of 22.49'
    )
    await alice.selectOption('#approve-reason_code', 'slip_verified')
    await alice.fill('#approve-comment', 'Slip and statement agree: the customer sent 1,499.00')
    await screenshot(alice, 'review-slip')
    // Without it: refused beside the choice, nothing decided.
    await submit(alice, '#approve-slip')
    assert.include(
      await text(alice, '#error-amount_policy'),
      `statement line #${line.id} received 1,499.00 THB, not the transfer_amount 1,500.00 THB: credit what was received (1,476.51 THB after the fee of 22.49)`
    )
    assert.isNull((await PaymentSlip.findOrFail(slip.id)).reviewDecision)
    assert.equal(
      await alice.inputValue('#approve-comment'),
      'Slip and statement agree: the customer sent 1,499.00'
    )
    await alice.check('#approve-amount_policy')
    await submit(alice, '#approve-slip')
    assert.include(await flash(alice), 'approval request #')
    const slipRequest = await ApprovalRequest.query()
      .where('target_id', order.platformOrderId)
      .firstOrFail()

    // Meanwhile another operator asks to credit the same line to the merchant.
    const carol = await operatorActor('carol@example.com')
    const lineRequest = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchantId, ...CREDIT },
      carol.actor
    )
    assert.equal(lineRequest.outcome, 'approval_requested')

    // The approver sees what each request takes.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl('/review/approvals'))
      const paid = await text(page, `#approval-receipt-${slipRequest.id}`)
      assert.include(paid, `slip ${slip.id}`, role)
      assert.include(paid, slip.verificationMsg.replace(/\s+/g, ' '), role)
      assert.include(paid, `Approving takes statement line #${line.id} (1,499.00 THB`, role)
      assert.include(paid, '1,499.00 THB · transfer_amount 1,500.00 THB', role)
      assert.include(paid, 'credits 1,476.51 THB after the fee of 22.49 (credit_received)', role)
      assert.equal(
        await page.locator(`#approval-receipt-${slipRequest.id} a[href="${lineHref}"]`).count(),
        1,
        role
      )
      const facts = await text(page, `#approval-facts-${lineRequest.request!.id}`)
      assert.include(facts, `line #${line.id} · `, role)
      assert.include(facts, ` · credit 1,499.00 THB`, role)
      const credited = await text(page, `#approval-receipt-${lineRequest.request!.id}`)
      assert.include(credited, 'unmatched', role)
      assert.include(credited, 'nobody yet', role)
    }
    assert.equal(await vera.locator(`#approve-request-${slipRequest.id}`).count(), 0)
    await root.selectOption(
      `#approve-form-${slipRequest.id} select[name=reason_code]`,
      'evidence_checked'
    )
    await root.fill(
      `#approve-form-${slipRequest.id} input[name=comment]`,
      'Line and slip agree; 1,499.00 credited'
    )
    await screenshot(root, 'review-approvals')
    await submit(root, `#approve-request-${slipRequest.id}`)
    assert.include(await flash(root), `Approval request #${slipRequest.id} approved`)
    // The line's request can no longer be carried out: the card says who took the line.
    const taken = await text(root, `#approval-receipt-${lineRequest.request!.id}`)
    assert.include(
      taken,
      `slip ${slip.id} of ${order.platformOrderId} approved by operator:under-admin@example.com (approval request #${slipRequest.id})`
    )
    assert.include(taken, 'approving is refused')
    await order.refresh()
    assert.equal(order.status, 'unsettled_paid')
    assert.equal(order.paidAmount, 149_900)

    // The line page: the claim, with its order; the slip naming the transfer.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/lines/${line.id}`))
      const claim = await text(page, '#line-claim')
      assert.include(
        claim,
        `slip ${slip.id} of ${order.platformOrderId} approved by operator:under-admin@example.com`,
        role
      )
      assert.equal(
        await page.locator('#line-claim-order').getAttribute('href'),
        `/admin/orders/${order.platformOrderId}`,
        role
      )
      assert.include(
        await text(page, '#line-claim-credited'),
        '1,476.51 THB after the fee of 22.49',
        role
      )
      const slips = await text(page, `#line-slip-${slip.id}`)
      assert.include(slips, order.platformOrderId, role)
      assert.include(slips, 'approved', role)
      assert.equal(await page.locator('#attach-form').count(), 0, role)
    }

    // The order page: its bank receipt, what was received and credited, the policy.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${order.platformOrderId}`))
      assert.include(
        await text(page, '#order-claim'),
        `slip ${slip.id} of ${order.platformOrderId} approved`,
        role
      )
      assert.equal(await page.locator(`#order-claim-line a[href="${lineHref}"]`).count(), 1, role)
      const received = await text(page, '#order-received')
      assert.include(received, '1,499.00 THB', role)
      assert.include(received, 'differs by -1.00', role)
      assert.include(
        await text(page, '#order-credited'),
        '1,476.51 THB after the fee of 22.49',
        role
      )
      assert.include(await text(page, '#order-amount-policy'), 'credit_received', role)
      assert.equal((await text(page, '#field-paid_amount')).trim(), '1,499.00', role)
      assert.include(await text(page, '#order-statement-line'), 'credit 1,499.00 THB', role)
      assert.equal(
        await page.locator(`#order-statement-line a[href="${lineHref}"]`).count(),
        1,
        role
      )
    }
    await screenshot(alice, 'order')
  })

  test('a slip approved before its line: the receivable on the slip and order pages, cleared when the line arrives; a refusal on a field the form lacks is shown', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount({ channel: 'transfer' })
    const order = await transferOrder(who, '2300.00')
    const { slip, transRef } = await slipBeforeItsLine(order)
    const pages = await signInEveryRole('early')
    const alice = pages.operator

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/slips/${slip.id}`))
      assert.include(
        await text(page, '#receipt-line'),
        'No line on the order’s deposit account carries this transRef yet',
        role
      )
      assert.include(
        await text(page, '#receipt-preview'),
        'No line yet: approving credits the merchant now and opens a receivable of 2,300.00 THB',
        role
      )
      assert.include(
        await text(page, `#slip-${slip.id} .slip-forensics`),
        'seen anywhere else',
        role
      )
    }
    // The amount is the order's: no policy to choose.
    assert.equal(await alice.locator('#approve-amount_policy').count(), 0)
    await alice.selectOption('#approve-reason_code', 'slip_verified')
    await alice.fill('#approve-comment', 'The slip is genuine; the statement comes tonight')
    await submit(alice, '#approve-slip')
    assert.include(await flash(alice), `Slip ${slip.id} approved`)
    assert.include(await text(alice, '#receipt-claim'), 'its bank line not yet received')

    // The order page says the line has not arrived, and since when; never "no line matched".
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${order.platformOrderId}`))
      assert.include(await text(page, '#order-receipt'), 'Credited before its line', role)
      assert.include(await text(page, '#order-claim'), 'its bank line not yet received', role)
      const waiting = await text(page, '#order-claim-line')
      assert.include(waiting, 'open receivable', role)
      assert.include(waiting, '2,300.00 THB expected between', role)
      assert.include(waiting, 'waiting 0 min', role)
      const section = await text(page, '#order-statement-line')
      assert.include(section, 'The bank line has not arrived yet', role)
      assert.notInclude(section, 'No statement line is matched', role)
      assert.include(
        await text(page, '#order-credited'),
        '2,265.50 THB after the fee of 34.50',
        role
      )
    }

    // Marking it paid again (another tab): refused on the order, said on top of the page.
    const refused = await alice.request.post(
      adminUrl(`/orders/${order.platformOrderId}/mark-paid`),
      {
        form: {
          _csrf: (await csrfToken(alice))!,
          reason_code: 'bank_confirmed',
          comment: 'again',
        },
        maxRedirects: 0,
      }
    )
    assert.equal(refused.status(), 302)
    await alice.goto(adminUrl(`/orders/${order.platformOrderId}`))
    // Beside the Mark paid action, as a notice: the first approval did it.
    assert.include(
      await text(alice, '#mark_paid-refusal.notice'),
      `${order.platformOrderId} was marked paid by you at `
    )
    assert.notInclude(await flash(alice), 'Nothing was saved')

    // The line arrives with the slip's transRef and clears the receivable.
    const line = await receiveLine(account.id, { amount: order.transferAmount, transRef })
    assert.equal(line.status, 'matched')
    const lineHref = `/admin/review/lines/${line.id}`
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${order.platformOrderId}`))
      const cleared = await text(page, '#order-claim-line')
      assert.include(cleared, `line #${line.id} · 2,300.00 THB`, role)
      assert.include(cleared, 'it cleared the receivable', role)
      assert.equal(await page.locator(`#order-claim-line a[href="${lineHref}"]`).count(), 1, role)
      assert.include(await text(page, '#order-statement-line'), 'credit 2,300.00 THB', role)

      // The slip's forensics were taken before the line existed: the page reads the line now.
      await page.goto(adminUrl(`/review/slips/${slip.id}`))
      assert.equal(await page.locator(`#receipt-line a[href="${lineHref}"]`).count(), 1, role)
      const forensics = await text(page, `#slip-${slip.id} .slip-forensics`)
      assert.notInclude(forensics, 'anywhere else', role)
      assert.include(forensics, `line ${line.id}`, role)

      await page.goto(adminUrl(`/review/lines/${line.id}`))
      assert.include(
        await text(page, '#line-claim'),
        `slip ${slip.id} of ${order.platformOrderId} approved by operator:early-operator@example.com`,
        role
      )
      assert.include(await text(page, `#line-slip-${slip.id}`), 'approved', role)
    }
  })

  test('a transfer another decision took: the slip page names it and the refusal is shown; a short line of a receivable is attached with the amount policy', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount({ channel: 'transfer' })
    const carol = await operatorActor('carol@example.com')
    const pages = await signInEveryRole('taken')
    const alice = pages.operator

    // The line was credited to the merchant before anyone looked at the slip.
    const first = await transferOrder(who, '1600.00')
    const { slip, line } = await payWithSlip(first, '1599.00')
    const credited = await creditMerchantFromLine(
      { statement_line_id: line.id, merchant_id: who.merchantId, ...CREDIT },
      carol.actor
    )
    assert.equal(credited.outcome, 'credited')
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/slips/${slip.id}`))
      assert.include(
        await text(page, '#receipt-claim'),
        `credited to merchant ${who.merchantId} by operator:carol@example.com`,
        role
      )
      assert.include(await text(page, '#receipt-preview'), 'approving is refused', role)
      // The line page says who took it, with the merchant's page.
      await page.goto(adminUrl(`/review/lines/${line.id}`))
      assert.include(
        await text(page, '#line-claim'),
        `credited to merchant ${who.merchantId} by operator:carol@example.com`,
        role
      )
      assert.equal(
        await page.locator('#line-claim-merchant').getAttribute('href'),
        `/admin/merchants/${who.merchantId}`,
        role
      )
      await page.goto(adminUrl(`/review/slips/${slip.id}`))
    }
    await alice.selectOption('#approve-reason_code', 'slip_verified')
    await alice.fill('#approve-comment', 'The slip looks right')
    await submit(alice, '#approve-slip')
    const message = await text(alice, '.flash.error')
    assert.include(
      message,
      `this transfer is statement line #${line.id} (1,599.00 THB), which was already claimed: credited to merchant ${who.merchantId} by operator:carol@example.com`
    )
    assert.notInclude(message, 'Nothing was saved')
    assert.isNull((await PaymentSlip.findOrFail(slip.id)).reviewDecision)

    // Approved on the slip for 500.00; its line brings 480.00 and waits in the queue.
    const second = await transferOrder(who, '500.00')
    const early = await slipBeforeItsLine(second)
    await reviewSlip({ slip_id: early.slip.id, ...APPROVE }, carol.actor)
    const short = await receiveLine(account.id, { amount: 48_000, transRef: early.transRef })
    assert.equal(short.status, 'unmatched')
    const shortHref = `/review/lines/${short.id}`
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(shortHref))
      assert.include(await text(page, '#line-claim'), 'Not claimed', role)
      const owed = await text(page, '#line-receivable')
      assert.include(owed, `${second.platformOrderId}: slip ${early.slip.id}`, role)
      assert.include(owed, 'its transRef is the slip’s', role)
      assert.include(owed, 'The line brings 480.00 THB, not 500.00', role)
      assert.include(
        owed,
        'the merchant gets 472.80 THB after the fee of 7.20 instead of 492.50',
        role
      )
      assert.include(
        await text(page, '#line-receivable-hint'),
        `Attach this line to ${second.platformOrderId}`,
        role
      )
      assert.include(await text(page, `#line-slip-${early.slip.id}`), 'approved', role)
      assert.equal(
        await page
          .locator(`#line-receivable a[href="/admin/orders/${second.platformOrderId}"]`)
          .count(),
        1,
        role
      )
    }
    assert.equal(await pages.viewer.locator('#attach-form').count(), 0)
    assert.equal(await alice.inputValue('#attach-platform_order_id'), second.platformOrderId)
    assert.include(
      await text(alice, '#attach-amount-policy'),
      'Credit what was received: 472.80 THB after the fee of 7.20'
    )
    await alice.selectOption('#attach-reason_code', 'customer_confirmed')
    await alice.fill('#attach-comment', 'The short transfer of the approved slip')
    await screenshot(alice, 'review-line')
    await submit(alice, '#attach-submit')
    assert.include(
      await text(alice, '#error-amount_policy'),
      'credit what was received (472.80 THB'
    )
    await alice.check('#attach-amount_policy')
    await submit(alice, '#attach-submit')
    assert.include(await flash(alice), 'its receivable is cleared')
    assert.include(
      await text(alice, '#line-claim'),
      `slip ${early.slip.id} of ${second.platformOrderId} approved by operator:carol@example.com`
    )
    assert.include(await text(alice, '#line-claim-credited'), '472.80 THB after the fee of 7.20')
    await second.refresh()
    assert.equal(second.paidAmount, 48_000)
  })

  test('marking paid from the order page takes the line naming the order and asks for the amount policy', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount({ channel: 'transfer' })
    const order = await transferOrder(who, '700.00')
    const line = await receiveLine(account.id, {
      amount: 69_900,
      reference: order.platformOrderId,
    })
    assert.equal(line.status, 'unmatched')
    const credit = paymentCredit(order, 69_900, 150)
    const pages = await signInEveryRole('mark')
    const alice = pages.operator
    const lineHref = `/admin/review/lines/${line.id}`

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${order.platformOrderId}`))
      assert.include(await text(page, '#order-claim'), 'no bank receipt is claimed', role)
      assert.include(
        await text(page, '#order-preview'),
        `statement line #${line.id} (699.00 THB`,
        role
      )
      assert.include(await text(page, '#order-preview'), 'it names the order', role)
      assert.equal(await page.locator(`#order-preview a[href="${lineHref}"]`).count(), 1, role)
      assert.include(await text(page, '#order-received'), 'differs by -1.00', role)
    }
    assert.equal(await pages.viewer.locator('#mark_paid-form').count(), 0)

    await alice.click('#decision-mark_paid summary')
    assert.include(
      await text(alice, '#mark-paid-amount-policy'),
      `Credit what was received: ${formatAmount(credit.credited)} THB after the fee of ${formatAmount(credit.fee)}`
    )
    await alice.selectOption('#mark_paid-reason_code', 'seen_on_statement')
    await alice.fill('#mark_paid-comment', 'The customer sent 1.00 less; the merchant agreed')
    await submit(alice, '#mark_paid-submit')
    assert.include(
      await text(alice, '#error-amount_policy'),
      `statement line #${line.id} received 699.00 THB, not the transfer_amount 700.00 THB`
    )
    await order.refresh()
    assert.equal(order.status, 'open')
    await alice.check('#mark_paid-amount_policy')
    await submit(alice, '#mark_paid-submit')
    assert.include(await flash(alice), 'marked paid (now unsettled_paid)')
    assert.include(
      await text(alice, '#order-claim'),
      `${order.platformOrderId} marked paid by operator:mark-operator@example.com`
    )
    assert.include(
      await text(alice, '#order-credited'),
      `${formatAmount(credit.credited)} THB after the fee of ${formatAmount(credit.fee)}`
    )
    assert.include(await text(alice, '#order-amount-policy'), 'credit_received')
  })
})
