import { cliActor } from '#core/actor'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PayoutOrder from '#payouts/models/payout_order'
import PaymentOrder from '#payments/models/payment_order'
import { recordPayoutOutcome } from '#payouts/actions/record_payout_outcome'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { returnStatementLine } from '#reconciliation/actions/return_statement_line'
import { importStatement } from '#reconciliation/actions/import_statement'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { readMerchantBalance } from '#ledger/ledger'
import { verifyLedger } from '#ledger/verify'
import { formatGatewayDateTime } from '#core/clock'
import { formatAmount } from '#core/money'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  PAYOUT_FIELDS,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { callbackRowsOf, createPayment, operatorActor } from '#tests/helpers/decisions'
import { lineRow, receiveLine } from '#tests/helpers/lines'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * Money out and receivables as operators handle them in the back-office
 * (docs/reconciliation.md, "Money out" and "Receivables"): debit lines no
 * transfer confirms wait in the statement-line queue, where an operator
 * says which transfer each is or explains it; a payout's order page shows
 * the debit line that confirmed it or the wait for it; a payment credited
 * before its bank line, which never came, has its credit taken back from
 * its order page. Built through the real actions; every page is read by an
 * admin, an operator and a viewer (who sees it all and decides nothing).
 */

type Role = 'admin' | 'operator' | 'viewer'

let sequence = 0

/** A withdrawal or settlement through the bulk-file connector, handed to the bank (pending). */
async function pendingPayout(
  who: TestMerchant,
  path: '/withdraw/create' | '/thb-settlement/create',
  amount: string,
  accountNo = PAYOUT_FIELDS.account_no
) {
  sequence += 1
  const response = await signedPost(
    path,
    who,
    authBody(who, {
      ...PAYOUT_FIELDS,
      amount,
      account_no: accountNo,
      merchant_order_id: `MO${sequence}`,
    })
  )
  if (response.status !== 200) throw new Error(`${path}: ${response.text}`)
  const order = await PayoutOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  order.status = 'pending'
  await order.save()
  return order
}

/** One statement line on the account, imported as a bank file would bring it. */
async function importLine(
  accountId: number,
  line: { direction: 'credit' | 'debit'; amount: number; reference?: string }
) {
  sequence += 1
  const imported = await importStatement(
    {
      deposit_account_id: accountId,
      file_name: `statement-${sequence}.csv`,
      content:
        'date_time,direction,amount,reference,description\n' +
        `${formatGatewayDateTime(new Date())},${line.direction},${formatAmount(line.amount)},${line.reference ?? ''},BULK TRANSFER ${sequence}\n`,
    },
    TEST_ACTOR
  )
  const row = await db.from('statement_lines').where('import_id', imported.importId).firstOrFail()
  return { ...row, id: Number(row.id), amount: Number(row.amount) }
}

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

async function text(page: Page, selector: string) {
  return (await page.locator(selector).innerText()).replace(/\s+/g, ' ')
}

async function flash(page: Page) {
  return (await page.locator('.flash').allInnerTexts()).join(' | ').replace(/\s+/g, ' ')
}

async function rows(page: Page) {
  return page.locator('#lines-table tbody tr[id^=line-row-]').count()
}

/** A direct POST with the page's own session and CSRF token. */
async function post(page: Page, path: string, form: Record<string, string>) {
  return page.request.post(adminUrl(path), {
    form: { _csrf: (await csrfToken(page)) ?? '', ...form },
    maxRedirects: 0,
  })
}

test.group('back-office: money out and receivables (browser)', (group) => {
  const contexts: BrowserContext[] = []

  group.each.setup(async () => {
    await resetDatabase()
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(() => closeBrowser())
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

  test('unexplained debits wait in the statement-line queue; each is confirmed as a payout or a return, or explained, once', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const carol = (await operatorActor('carol@example.com')).actor
    // The bank's export lost the references: three debits nothing claims.
    const debit = await importLine(account.id, { direction: 'debit', amount: 25_000 })
    const refund = await importLine(account.id, { direction: 'debit', amount: 40_000 })
    const charge = await importLine(account.id, { direction: 'debit', amount: 1_250 })
    for (const line of [debit, refund, charge]) assert.equal(line.status, 'unmatched')
    // A credit nobody claims waits too, as a real morning has.
    const unknown = await receiveLine(account.id, { amount: 30_000 })
    // The transfers those debits may be: a withdrawal recorded successful by hand (its debit
    // awaited), another of the same amount still pending at the bank, a settlement of another
    // amount, a credit returned to its payer.
    const sent = await pendingPayout(who, '/withdraw/create', '250.00', '1111111111')
    await recordPayoutOutcome(
      { platform_order_id: sent.platformOrderId, outcome: 'success' },
      carol
    )
    const atBank = await pendingPayout(who, '/withdraw/create', '250.00', '2222222222')
    const other = await pendingPayout(who, '/thb-settlement/create', '100.00')
    const returned = await receiveLine(account.id, { amount: 40_000 })
    await returnStatementLine(
      {
        statement_line_id: returned.id,
        bank: 'KTB',
        account_no: '4021887563',
        account_name: 'Narin Suksawat',
        reason_code: 'no_matching_order',
        comment: 'nobody claims it',
      },
      // From the shell: applied at once (the back-office waits for an admin).
      cliActor()
    )
    assert.deepEqual(
      (await verifyReconciliation()).problems.map((problem) => problem.kind),
      ['unexplained_debit', 'unexplained_debit', 'unexplained_debit']
    )

    const pages = await signInEveryRole('out')
    const { operator: alice, admin: root, viewer: vera } = pages

    // The queue: the three debits beside the credit, counted in the tab; a filter of their own.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl('/review/lines'))
      assert.equal(await rows(page), 4, role)
      assert.equal(await text(page, '.review-tabs a.active .count'), '4', role)
      for (const line of [debit, refund, charge]) {
        const row = await text(page, `#line-row-${line.id}`)
        assert.include(row, 'unexplained debit', role)
        assert.include(row, `−${formatAmount(line.amount)}`, role)
      }
      assert.include(await text(page, `#line-row-${unknown.id}`), 'unmatched', role)
      assert.equal(await page.locator(`#line-row-${returned.id}`).count(), 0, role)
      await page.selectOption('#filter-status', 'unexplained_debit')
      await Promise.all([page.waitForNavigation(), page.click('#line-filters button[type=submit]')])
      assert.equal(await rows(page), 3, role)
      assert.equal(await page.locator(`#line-row-${unknown.id}`).count(), 0, role)
      await page.goto(adminUrl('/review/lines?status=unmatched'))
      assert.equal(await rows(page), 1, role)
      assert.equal(await page.locator(`#line-row-${unknown.id}`).count(), 1, role)
    }

    // The debit's page: nothing accounts for it; the transfers of its amount it may be.
    const debitPath = `/review/lines/${debit.id}`
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(debitPath))
      assert.include(await text(page, '#line-debit'), 'unexplained debit', role)
      assert.include(await text(page, '#line-confirms'), 'Nothing accounts for this debit', role)
      assert.include(await text(page, '#line-confirms'), 'unexplained_debit', role)
      assert.equal(await page.locator('#transfers-table tbody tr').count(), 2, role)
      const waiting = await text(page, `#transfer-waiting-${sent.platformOrderId}`)
      assert.include(waiting, 'withdrawal sent, waiting for its debit line since', role)
      assert.include(waiting, 'success (by_hand)', role)
      assert.include(waiting, '1111111111', role)
      assert.equal(
        await page
          .locator(
            `#transfer-waiting-${sent.platformOrderId} a[href="/admin/orders/${sent.platformOrderId}"]`
          )
          .count(),
        1,
        role
      )
      assert.include(
        await text(page, `#transfer-pending-${atBank.platformOrderId}`),
        'pending at the bank: confirming completes it',
        role
      )
      assert.equal(await page.locator(`[id$="-${other.platformOrderId}"]`).count(), 0, role)
      // A debit is not money received: none of the credit decisions, no orders it may pay.
      for (const credit of ['#attach-form', '#credit-form', '#return-form', '#line-candidates']) {
        assert.equal(await page.locator(credit).count(), 0, `${role} ${credit}`)
      }
    }
    for (const page of [alice, root]) {
      assert.equal(await page.locator('#confirm-form').count(), 1)
      assert.equal(await page.locator('#explain-form').count(), 1)
    }
    assert.equal(await vera.locator('#confirm-form, #explain-form, .pick-transfer').count(), 0)
    assert.include(await text(vera, '#line-undecided'), 'Operators say which transfer it is')
    // Hidden is not enough: the server refuses the viewer's POST.
    for (const [path, form] of [
      [`${debitPath}/confirm-debit`, { platform_order_id: sent.platformOrderId, comment: 'x' }],
      [`${debitPath}/explain-debit`, { reason_code: 'bank_charge', comment: 'x' }],
    ] as const) {
      assert.equal((await post(vera, path, form)).status(), 403, path)
    }
    assert.equal((await lineRow(debit.id)).status, 'unmatched')

    // A second tab on the same line, opened before anyone decides.
    const stale = await alice.context().newPage()
    await stale.goto(adminUrl(debitPath))

    // The candidate's button fills the form.
    await alice.click(`#transfer-waiting-${sent.platformOrderId} .pick-transfer`)
    assert.equal(await alice.inputValue('#confirm-platform_order_id'), sent.platformOrderId)
    await alice.fill(
      '#confirm-comment',
      'The bank portal shows 250.00 to KBANK 1111111111 at this time'
    )
    await screenshot(alice, 'review-debit-line')

    // Amounts that differ: refused beside the field, what was typed kept.
    await alice.fill('#confirm-platform_order_id', other.platformOrderId)
    await submit(alice, '#confirm-submit')
    assert.include(
      await text(alice, '#error-platform_order_id'),
      `${other.platformOrderId} sends 100.00 THB but line #${debit.id} is 250.00 THB`
    )
    assert.include(await flash(alice), 'Nothing was saved')
    assert.equal(await alice.inputValue('#confirm-platform_order_id'), other.platformOrderId)
    assert.equal(
      await alice.inputValue('#confirm-comment'),
      'The bank portal shows 250.00 to KBANK 1111111111 at this time'
    )
    // Neither a payout nor a returned line: refused beside the payout's field.
    await alice.fill('#confirm-platform_order_id', '')
    await submit(alice, '#confirm-submit')
    assert.include(await text(alice, '#error-platform_order_id'), 'name either the payout')
    // Not a line number.
    await alice.fill('#confirm-returned_line_id', 'twelve')
    await submit(alice, '#confirm-submit')
    assert.include(await text(alice, '#error-returned_line_id'), 'must be a statement line number')
    await alice.fill('#confirm-returned_line_id', '')
    assert.equal((await lineRow(debit.id)).status, 'unmatched')

    await alice.click(`#transfer-waiting-${sent.platformOrderId} .pick-transfer`)
    await submit(alice, '#confirm-submit')
    assert.include(
      await flash(alice),
      `line #${debit.id} confirms ${sent.platformOrderId} (success): 250.00 THB left the bank for it`
    )
    assert.include(await text(alice, '#line-confirms'), `Confirms: payout order ${sent.id}`)
    assert.equal(await text(alice, '#line-status'), 'matched')
    assert.include(await text(alice, '#line-taken'), 'no decision applies')
    assert.equal(await alice.locator('#confirm-form, #explain-form').count(), 0)
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(debitPath))
      assert.equal(
        await page.locator('#line-confirms-order').getAttribute('href'),
        `/admin/orders/${sent.platformOrderId}`,
        role
      )
      assert.include(await text(page, '#line-money-out'), 'by_hand', role)
    }

    // The stale tab: refused on top of the page, naming what the line already confirms.
    await stale.fill('#confirm-platform_order_id', atBank.platformOrderId)
    await stale.fill('#confirm-comment', 'or was it this one?')
    await submit(stale, '#confirm-submit')
    const refused = await text(stale, '.flash.error')
    assert.include(refused, `statement line #${debit.id} already confirms payout order ${sent.id}`)
    assert.notInclude(refused, 'Nothing was saved')
    await atBank.refresh()
    assert.equal(atBank.status, 'pending', 'the pending payout is not completed by a taken line')

    // The admin confirms the return to the payer: its debit, on the same account.
    await root.goto(adminUrl(`/review/lines/${refund.id}`))
    assert.equal(await root.locator('#transfers-table tbody tr').count(), 1)
    const waitingReturn = await text(root, `#transfer-return-${returned.id}`)
    // Returned from the shell (break-glass) in the set-up: the command's actor.
    assert.match(waitingReturn, /returned to its payer by cli:/, 'admin')
    assert.include(waitingReturn, 'KTB 4021887563 (Narin Suksawat)')
    await root.click(`#transfer-return-${returned.id} .pick-transfer`)
    assert.equal(await root.inputValue('#confirm-returned_line_id'), String(returned.id))
    assert.equal(await root.inputValue('#confirm-platform_order_id'), '')
    await root.fill('#confirm-comment', 'The refund to Narin Suksawat, made in the bank portal')
    await submit(root, '#confirm-submit')
    assert.include(
      await flash(root),
      `line #${refund.id} confirms the return of statement line #${returned.id}: 400.00 THB left the bank for it`
    )
    assert.include(
      await text(root, '#line-confirms'),
      `Confirms: the return of statement line #${returned.id}`
    )
    assert.equal(
      await root.locator('#line-confirms-return').getAttribute('href'),
      `/admin/review/lines/${returned.id}`
    )

    // The operator explains the bank's charge; the comment is required.
    await alice.goto(adminUrl(`/review/lines/${charge.id}`))
    assert.include(await text(alice, '#transfers-table'), 'No payout or return of 12.50 THB')
    await alice.selectOption('#explain-reason_code', 'bank_charge')
    await submit(alice, '#explain-submit')
    assert.include(await text(alice, '#explain-form .error'), 'comment is required')
    assert.equal(await alice.inputValue('#explain-reason_code'), 'bank_charge')
    assert.equal(await alice.locator('#confirm-form .error').count(), 0)
    await alice.fill('#explain-comment', 'Monthly account fee, on the bank’s tariff')
    await submit(alice, '#explain-submit')
    assert.include(
      await flash(alice),
      `line #${charge.id} explained: 12.50 THB booked as the gateway's bank charges`
    )
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/review/lines/${charge.id}`))
      assert.include(await text(page, '#line-decided'), 'explained by operator:out-operator', role)
      assert.include(await text(page, '#line-decided'), 'bank_charge', role)
      assert.include(
        await text(page, '#line-confirms'),
        'a debit explained by operator:out-operator@example.com',
        role
      )
      assert.equal(await page.locator('#confirm-form, #explain-form').count(), 0, role)
    }
    const twice = await post(alice, `/review/lines/${charge.id}/explain-debit`, {
      reason_code: 'other',
      comment: 'again',
    })
    assert.equal(twice.status(), 302)
    await alice.goto(adminUrl(`/review/lines/${charge.id}`))
    assert.include(
      await text(alice, '.flash.error'),
      `statement line #${charge.id} already confirms a debit explained by`
    )

    // The queue is down to the credit; the bank reconciles.
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl('/review/lines'))
      assert.equal(await rows(page), 1, role)
      assert.equal(await text(page, '.review-tabs a.active .count'), '1', role)
      await page.goto(adminUrl('/review/lines?status=unexplained_debit'))
      assert.equal(await rows(page), 0, role)
    }
    assert.deepEqual((await verifyReconciliation()).problems, [])
    assert.deepEqual((await verifyLedger()).drifts, [])
  })

  test('a payout’s order page: nothing yet while open, waiting for its debit line once sent, then the line that confirmed it', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00, { payoutRoute: 'bulk_file' })
    const account = await createDepositAccount()
    const carol = (await operatorActor('carol@example.com')).actor
    const open = await pendingPayout(who, '/withdraw/create', '120.00', '3333333333')
    const withdrawal = await pendingPayout(who, '/withdraw/create', '300.00', '4444444444')
    const settlement = await pendingPayout(who, '/thb-settlement/create', '500.00')
    const bounced = await pendingPayout(who, '/withdraw/create', '80.00', '5555555555')
    for (const order of [withdrawal, settlement]) {
      await recordPayoutOutcome(
        { platform_order_id: order.platformOrderId, outcome: 'success' },
        carol
      )
    }
    // From the shell: at once (in the back-office a failure waits for a second operator).
    await recordPayoutOutcome(
      { platform_order_id: bounced.platformOrderId, outcome: 'failed', reason: 'account_closed' },
      cliActor()
    )
    const pages = await signInEveryRole('bank')
    const alice = pages.operator
    const queueLink = 'a[href="/admin/review/lines?status=unexplained_debit"]'

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${open.platformOrderId}`))
      assert.include(
        await text(page, '#order-bank'),
        'Nothing yet: the payout is pending and no money has left the bank for it',
        role
      )
      await page.goto(adminUrl(`/orders/${bounced.platformOrderId}`))
      assert.include(
        await text(page, '#order-bank'),
        'No money left the bank for it: the payout is failed',
        role
      )
      for (const order of [withdrawal, settlement]) {
        await page.goto(adminUrl(`/orders/${order.platformOrderId}`))
        const line = await text(page, '#order-debit-line')
        assert.include(line, 'open item', role)
        assert.include(line, 'waiting for its debit line since', role)
        assert.equal(await page.locator(`#order-debit-line ${queueLink}`).count(), 1, role)
        assert.include(
          await text(page, '#order-transfer'),
          `${formatAmount(order.amount)} THB · by_hand · recorded by operator:carol@example.com`,
          role
        )
      }
    }

    // The statement: the withdrawal's debit names it; the settlement's lost its reference.
    const named = await importLine(account.id, {
      direction: 'debit',
      amount: 30_000,
      reference: withdrawal.platformOrderId,
    })
    assert.equal(named.status, 'matched')
    const bare = await importLine(account.id, { direction: 'debit', amount: 50_000 })
    assert.equal(bare.status, 'unmatched')
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${withdrawal.platformOrderId}`))
      const line = await text(page, '#order-debit-line')
      assert.include(line, `confirmed by statement line #${named.id} · 300.00 THB`, role)
      assert.equal(
        await page.locator(`#order-debit-line a[href="/admin/review/lines/${named.id}"]`).count(),
        1,
        role
      )
      await page.goto(adminUrl(`/orders/${settlement.platformOrderId}`))
      assert.include(await text(page, '#order-debit-line'), 'waiting for its debit line', role)
    }
    await alice.goto(adminUrl(`/orders/${withdrawal.platformOrderId}`))
    await screenshot(alice, 'payout-bank')

    // From the order page to the unexplained debits, and the settlement confirmed there.
    await alice.goto(adminUrl(`/orders/${settlement.platformOrderId}`))
    await Promise.all([alice.waitForNavigation(), alice.click(`#order-debit-line ${queueLink}`)])
    assert.equal(await rows(alice), 1)
    await Promise.all([
      alice.waitForNavigation(),
      alice.click(`#line-row-${bare.id} a[href="/admin/review/lines/${bare.id}"] >> nth=0`),
    ])
    assert.include(
      await text(alice, `#transfer-waiting-${settlement.platformOrderId}`),
      'settlement sent, waiting for its debit line'
    )
    await alice.click(`#transfer-waiting-${settlement.platformOrderId} .pick-transfer`)
    await alice.fill('#confirm-comment', 'The settlement batch of the day, without its reference')
    await submit(alice, '#confirm-submit')
    assert.include(await flash(alice), `line #${bare.id} confirms ${settlement.platformOrderId}`)
    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(`/orders/${settlement.platformOrderId}`))
      assert.include(
        await text(page, '#order-debit-line'),
        `confirmed by statement line #${bare.id} · 500.00 THB`,
        role
      )
      assert.include(await text(page, '#order-statement-line'), `#${bare.id}`, role)
    }
    const report = await verifyReconciliation()
    assert.deepEqual(report.problems, [])
    assert.deepEqual(report.openTransfers, [])
  })

  test('a payment credited before its bank line, which never came: operators and admins take the credit back from the order page; a viewer cannot', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    await createDepositAccount()
    const carol = (await operatorActor('carol@example.com')).actor
    const first = await createPayment(who, '800.00')
    const second = await createPayment(who, '500.00')
    for (const order of [first, second]) {
      await markPaymentPaid(
        {
          platform_order_id: order.platformOrderId,
          reason_code: 'other',
          comment: 'the customer insisted',
        },
        carol
      )
    }
    assert.deepInclude(await readMerchantBalance(who.merchant.id), {
      unsettleBalance: 78_800 + 49_250,
    })
    const callbacks = (await callbackRowsOf(first)).length
    const pages = await signInEveryRole('back')
    const { operator: alice, admin: root, viewer: vera } = pages
    const firstPath = `/orders/${first.platformOrderId}`

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(firstPath))
      assert.include(await text(page, '#order-claim-line'), 'open receivable', role)
      if (role === 'viewer') continue
      assert.include(await text(page, '#decision-receivable'), 'take the credit back', role)
    }
    // A viewer decides nothing: no Decisions card at all.
    assert.equal(await vera.locator('.decisions-card').count(), 0)
    assert.equal(await vera.locator('#decision-reverse_receivable').count(), 0)
    assert.equal(await vera.locator('#reverse_receivable-form').count(), 0)
    const forbidden = await post(vera, `${firstPath}/reverse-receivable`, {
      reason_code: 'no_money_received',
      comment: 'x',
    })
    assert.equal(forbidden.status(), 403)
    await first.refresh()
    assert.equal(first.status, 'unsettled_paid')

    // The operator's form says what it does; without a comment, refused beside the field.
    await alice.click('#decision-reverse_receivable summary')
    const warning = await text(alice, '#reverse-warning')
    assert.include(
      warning,
      "The merchant's unsettled balance is debited the 788.00 THB credited, and the fee of 12.00 THB is reversed"
    )
    assert.include(warning, 'The order is frozen for review')
    assert.include(warning, 'No callback is sent')
    await alice.selectOption('#reverse_receivable-reason_code', 'forged_slip')
    await submit(alice, '#reverse_receivable-submit')
    assert.include(
      await text(alice, '#reverse_receivable-form .error'),
      'comment is required: say why the bank will not receive this money'
    )
    assert.equal(await alice.inputValue('#reverse_receivable-reason_code'), 'forged_slip')
    assert.isTrue(
      await alice.locator('#decision-reverse_receivable').evaluate((el) => (el as any).open)
    )

    // Meanwhile the admin takes it back from their own page.
    await root.click('#decision-reverse_receivable summary')
    await root.selectOption('#reverse_receivable-reason_code', 'no_money_received')
    await root.fill('#reverse_receivable-comment', 'No credit on three days of statements')
    await submit(root, '#reverse_receivable-submit')
    assert.include(
      await flash(root),
      `${first.platformOrderId}: credit taken back, 788.00 THB debited from the merchant (fee 12.00); the order is freeze. No callback is sent: tell the merchant.`
    )
    assert.equal(await text(root, '#order-status'), 'freeze')
    assert.equal(await root.locator('#decision-reverse_receivable').count(), 0)

    // The operator's form, sent again: refused on top, naming who took it back.
    await alice.fill('#reverse_receivable-comment', 'The slip is forged')
    await submit(alice, '#reverse_receivable-submit')
    const refused = await text(alice, '.flash.error')
    assert.include(
      refused,
      `${first.platformOrderId}'s credit was already reversed by operator:back-admin@example.com`
    )
    assert.notInclude(refused, 'Nothing was saved')

    for (const [role, page] of Object.entries(pages)) {
      await page.goto(adminUrl(firstPath))
      assert.include(
        await text(page, '#order-reversed'),
        'credit taken back by operator:back-admin@example.com at',
        role
      )
      assert.include(await text(page, '#order-claim-line'), 'never arrived', role)
      assert.include(
        await text(page, '#order-received'),
        `${formatAmount(first.transferAmount)} THB expected, never received`,
        role
      )
      assert.include(await text(page, '#order-credited'), 'taken back', role)
      assert.include(await text(page, '#order-claim'), 'its credit was taken back by', role)
      assert.include(await text(page, '#order-statement-line'), 'No bank line came', role)
      assert.notInclude(await text(page, '#order-receipt'), 'open receivable', role)
      assert.equal(await page.locator('#reverse_receivable-form').count(), 0, role)
    }

    // The operator takes back the second one.
    await alice.goto(adminUrl(`/orders/${second.platformOrderId}`))
    await alice.click('#decision-reverse_receivable summary')
    await alice.selectOption('#reverse_receivable-reason_code', 'transfer_recalled')
    await alice.fill('#reverse_receivable-comment', 'The payer’s bank recalled the transfer')
    await submit(alice, '#reverse_receivable-submit')
    assert.include(
      await flash(alice),
      `${second.platformOrderId}: credit taken back, 492.50 THB debited from the merchant (fee 7.50); the order is freeze.`
    )
    assert.include(
      await text(alice, '#order-reversed'),
      'credit taken back by operator:back-operator@example.com'
    )
    assert.include(
      await text(alice, '#order-timeline'),
      'credit of 492.50 THB reversed (transfer_recalled)'
    )

    assert.deepInclude(await readMerchantBalance(who.merchant.id), {
      balance: 0,
      unsettleBalance: 0,
    })
    for (const order of [first, second]) {
      assert.equal((await PaymentOrder.findOrFail(order.id)).status, 'freeze')
    }
    assert.lengthOf(await callbackRowsOf(first), callbacks, 'no callback for a reversal')
    assert.deepEqual((await verifyLedger()).drifts, [])
    assert.deepEqual((await verifyReconciliation()).problems, [])
  })
})
