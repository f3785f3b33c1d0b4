import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import type PaymentOrder from '#payments/models/payment_order'
import { markPaymentPaid } from '#payments/actions/mark_payment_paid'
import { importStatement } from '#reconciliation/actions/import_statement'
import { reverseReceivable } from '#reconciliation/actions/reverse_receivable'
import { verifyReconciliation } from '#reconciliation/verify/index'
import { accountReconciliation } from '#admin/queries/reconciliation_page'
import { formatBaht } from '#admin/views/dashboard'
import { formatGatewayDateTime, GATEWAY_ZONE, gatewayDay } from '#core/clock'
import type { Actor } from '#core/actor'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { createPayment, operatorActor, removeSlipImages } from '#tests/helpers/decisions'
import { receiveLine } from '#tests/helpers/lines'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * The reconciliation page, the receivables queue and the dashboard's card,
 * over money moved by the gateway's own actions: a statement imported (a
 * payment matched, credits no order takes, a debit), payments marked paid
 * before their line (receivables: one cleared by its line, one waiting, one
 * aged past the window), then a day's line altered behind the ledger's back.
 */

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).innerText()).trim()

async function markPaid(order: PaymentOrder, actor: Actor) {
  const result = await markPaymentPaid(
    {
      platform_order_id: order.platformOrderId,
      reason_code: 'bank_confirmed',
      comment: 'the bank confirmed the transfer by phone',
    },
    actor
  )
  if (result.outcome !== 'paid') throw new Error(`not paid: ${result.outcome}`)
}

/** The money of the scenario; returns what the pages must show. */
async function scenario(who: TestMerchant, accountId: number, actor: Actor) {
  const now = DateTime.now().setZone(GATEWAY_ZONE)
  const matched = await createPayment(who, '1000.00')
  const waiting = await createPayment(who, '2300.00')
  const aged = await createPayment(who, '1450.00')
  const cleared = await createPayment(who, '640.00')
  for (const order of [matched, waiting, aged, cleared]) {
    if (order.depositAccountId !== accountId) throw new Error('payment on another account')
  }

  // Today: the matched payment and a credit no order takes. Yesterday (a fixed
  // time of the bank day): another such credit and a bank charge.
  const yesterday = now.minus({ days: 1 }).startOf('day')
  const at = (time: DateTime) => formatGatewayDateTime(time.toJSDate())
  const imported = await importStatement(
    {
      deposit_account_id: accountId,
      file_name: 'kbank-statement.csv',
      content:
        'date_time,direction,amount,reference,description\n' +
        `${at(now)},credit,${(matched.transferAmount / 100).toFixed(2)},,TRANSFER FROM SCB X7890 SOMCHAI JAIDEE\n` +
        `${at(now)},credit,777.00,,TRANSFER FROM KTB X1111 PRANEE WONGSA\n` +
        `${at(yesterday.plus({ hours: 10 }))},credit,500.00,,TRANSFER FROM BBL X2222 NARIN SUKSAWAT\n` +
        `${at(yesterday.plus({ hours: 11 }))},debit,250.00,,MONTHLY ACCOUNT FEE\n`,
    },
    TEST_ACTOR
  )
  if (imported.results.matched !== 1) throw new Error(JSON.stringify(imported))

  // Credited before their line: one waits, one past the window, one cleared by its line.
  for (const order of [waiting, aged, cleared]) await markPaid(order, actor)
  const agedAt = now.minus({ hours: 30 })
  await db
    .from('receipt_claims')
    .where('payment_order_id', aged.id)
    .update({ claimed_at: agedAt.toJSDate() })
  const line = await receiveLine(accountId, {
    amount: cleared.transferAmount,
    lineAt: new Date(Date.now() - 30_000),
  })
  if (line.status !== 'matched') throw new Error(`the line did not clear: ${line.status}`)

  const claims = await db
    .from('receipt_claims')
    .whereNull('statement_line_id')
    .orderBy('claimed_at')
  return {
    now,
    today: now.toFormat('yyyy-LL-dd'),
    yesterday: yesterday.toFormat('yyyy-LL-dd'),
    agedDay: gatewayDay(agedAt.toJSDate()),
    orders: { matched, waiting, aged, cleared },
    staleClaimId: Number(claims[0].id),
    waitingClaimId: Number(claims[1].id),
  }
}

test.group('back-office: reconciliation (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
    await removeSlipImages()
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('a viewer reads the account’s bank days, open items and exceptions, the receivables queue and the dashboard card, and cannot run the check', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount()
    // Another account, listed after it (its group sorts later): never the default.
    const other = await createDepositAccount({ depositGroup: 'wholesale' })
    const { actor } = await operatorActor('alice@example.com')
    const data = await scenario(who, account.id, actor)
    const { matched, waiting, aged, cleared } = data.orders

    // The page's query computes what the whole-database check computes, for this account.
    const report = await verifyReconciliation()
    const figures = await accountReconciliation({
      depositAccountId: account.id,
      from: data.yesterday,
      to: data.today,
    })
    for (const day of figures.days) {
      const checked = report.days.find(
        (entry) => entry.depositAccountId === account.id && entry.day === day.day
      )
      assert.deepEqual(
        { credits: day.credits, debits: day.debits, ledgerNet: day.ledgerNet },
        {
          credits: checked?.credits ?? 0,
          debits: checked?.debits ?? 0,
          ledgerNet: checked?.ledgerNet ?? 0,
        },
        day.day
      )
    }
    assert.deepEqual(
      figures.openReceivables.map((item) => [item.claimId, item.amount, item.stale]),
      report.openReceivables
        .filter((item) => item.depositAccountId === account.id)
        .map((item) => [item.claimId, item.amount, item.stale])
    )
    // Its problems: the stale receivable and the bank charge no transfer explains.
    assert.deepEqual(
      figures.problems.map((problem) => `${problem.kind}: ${problem.detail}`).sort(),
      report.problems
        .filter((problem) => problem.depositAccountId === account.id)
        .map((problem) => `${problem.kind}: ${problem.detail}`)
        .sort()
    )
    assert.sameMembers(
      figures.problems.map((problem) => problem.kind),
      ['stale_receivable', 'unexplained_debit']
    )

    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    const page = viewer.page
    await page.goto(adminUrl('/reconciliation'))
    assert.equal(await page.locator('h1').innerText(), 'Reconciliation')
    assert.equal(
      await page.locator('#field-account').inputValue(),
      String(account.id),
      'the first account by default'
    )
    assert.include(await page.locator('#field-account').innerText(), `${other.id} ·`)
    assert.equal(await page.locator('#field-to').inputValue(), data.today)
    assert.equal(
      await page.locator('#field-from').inputValue(),
      data.now.minus({ days: 6 }).toFormat('yyyy-LL-dd')
    )
    assert.equal(await page.locator('#days-table tbody tr').count(), 7)
    assert.include(await page.locator('header.top nav a.active').innerText(), 'Reconciliation')

    // Today: the matched payment, the stray credit and the receivable's line.
    const todayRow = `#day-${data.today}`
    const todayCredits = matched.transferAmount + 77_700 + cleared.transferAmount
    assert.include(await text(page, `${todayRow} td.credits`), formatBaht(todayCredits))
    assert.include(await text(page, `${todayRow} td.credits`), '3 lines')
    assert.equal(await text(page, `${todayRow} td.ledger`), formatBaht(todayCredits))
    assert.equal(await text(page, `${todayRow} td.difference`), '0.00')
    assert.notInclude(
      (await page.locator(`${todayRow} td.difference`).getAttribute('class')) ?? '',
      'bad-text'
    )
    assert.include(
      await text(page, `${todayRow} td.claimed`),
      formatBaht(matched.transferAmount + cleared.transferAmount)
    )
    assert.include(await text(page, `${todayRow} td.unclaimed`), '777.00')
    // Opened today: the waiting one and the one its line cleared (the aged one 30 h ago).
    assert.include(
      await text(page, `${todayRow} td.opened`),
      formatBaht(waiting.transferAmount + cleared.transferAmount)
    )
    assert.include(await text(page, `${todayRow} td.cleared`), formatBaht(cleared.transferAmount))
    // Yesterday: a credit and a bank charge; the aged receivable on the day it was opened.
    const yesterdayRow = `#day-${data.yesterday}`
    assert.include(await text(page, `${yesterdayRow} td.credits`), '500.00')
    assert.include(await text(page, `${yesterdayRow} td.debits`), '250.00')
    assert.equal(await text(page, `${yesterdayRow} td.net`), '250.00')
    assert.equal(await text(page, `${yesterdayRow} td.ledger`), '250.00')
    assert.include(
      await text(page, `#day-${data.agedDay} td.opened`),
      formatBaht(aged.transferAmount)
    )

    // Open items: the waiting receivable and the stale one, highlighted.
    const stale = page.locator(`#open-receivables #receivable-${data.staleClaimId}`)
    assert.include(await stale.innerText(), 'past the window')
    assert.include(await stale.innerText(), '1 d 6 h')
    assert.equal(await stale.locator('.age-old').count(), 1)
    assert.equal(
      await stale.locator('a').first().getAttribute('href'),
      `/admin/orders/${aged.platformOrderId}`
    )
    const fresh = page.locator(`#open-receivables #receivable-${data.waitingClaimId}`)
    assert.include(await fresh.innerText(), 'waiting')
    assert.include(await fresh.innerText(), waiting.platformOrderId)
    assert.equal(await text(page, '#receivables-count'), '2')
    assert.include(await text(page, '#receivables-stale'), '1 past the 24 h window')
    assert.equal(await text(page, '#unclaimed-count'), '2')
    assert.equal(await text(page, '#unclaimed-amount'), '1,277.00')
    assert.equal(
      await page.locator('#unclaimed-queue').getAttribute('href'),
      `/admin/review/lines?account=${account.id}`
    )
    // Exceptions: the stale receivable and yesterday's charge; no day drifts.
    assert.equal(await page.locator('#exceptions-list li').count(), 2)
    assert.include(await text(page, '#exceptions-list'), `stale_receivable ${aged.platformOrderId}`)
    assert.include(await text(page, '#exceptions-list'), 'unexplained_debit')
    assert.notInclude(await text(page, '#exceptions-list'), 'bank_day_drift')

    // A viewer sees no check button, and the server refuses its POST.
    assert.equal(await page.locator('#check-now').count(), 0)
    assert.include(await text(page, '#last-check'), 'No check recorded yet')
    const refused = await page.request.post(adminUrl('/reconciliation/check'), {
      form: { _csrf: (await csrfToken(page)) ?? '', account: String(account.id) },
      maxRedirects: 0,
    })
    assert.equal(refused.status(), 403)
    assert.lengthOf(await db.from('reconciliation_runs'), 0)

    // The other account: nothing happened on it.
    await page.goto(adminUrl(`/reconciliation?account=${other.id}`))
    assert.equal(await text(page, `#day-${data.today} td.credits`), '0.00\n0 lines')
    assert.include(await text(page, '#open-receivables'), 'None')

    // The receivables queue: oldest first, the stale one flagged; the tab counts it.
    await page.goto(adminUrl('/review/receivables'))
    const rows = page.locator('#receivables-table tbody tr')
    assert.equal(await rows.count(), 2)
    assert.equal(await rows.first().getAttribute('id'), `receivable-${data.staleClaimId}`)
    assert.include(await rows.first().innerText(), 'past the window')
    assert.include(await rows.first().innerText(), 'mark_paid')
    assert.include(await rows.first().innerText(), 'operator:alice@example.com')
    assert.include(await rows.first().innerText(), who.merchantId)
    assert.include(await rows.first().innerText(), `${account.id} · KBANK ${account.accountNo}`)
    assert.include(await rows.nth(1).innerText(), 'waiting')
    assert.equal(
      await rows.first().locator('a.button').getAttribute('href'),
      `/admin/orders/${aged.platformOrderId}`
    )
    const tab = page.locator('.review-tabs a.active')
    assert.include(await tab.innerText(), 'Receivables')
    assert.equal(await tab.locator('.count').innerText(), '1')
    await page.goto(adminUrl('/review/frozen'))
    assert.equal(
      await page.locator('.review-tabs a[href="/admin/review/receivables"] .count').innerText(),
      '1'
    )

    // The dashboard's card.
    await page.goto(adminUrl(''))
    assert.equal(await text(page, '#receivables-open'), '2')
    assert.equal(
      await text(page, '#receivables-amount'),
      formatBaht(waiting.transferAmount + aged.transferAmount)
    )
    assert.equal(await text(page, '#receivables-oldest'), '1 d 6 h')
    assert.equal(await text(page, '#receivables-stale'), '1')
    assert.include(
      (await page.locator('#receivables-stale').getAttribute('class')) ?? '',
      'bad-text'
    )
    assert.equal(
      await page.locator('#receivables-link').getAttribute('href'),
      '/admin/review/receivables'
    )

    // Behind the ledger's back, yesterday's charge is altered: the day drifts.
    await db
      .from('statement_lines')
      .where({ deposit_account_id: account.id, direction: 'debit' })
      .update({ amount: 26_000 })
    await page.goto(adminUrl(`/reconciliation?account=${account.id}`))
    assert.equal(await text(page, `${yesterdayRow} td.net`), '240.00')
    assert.equal(await text(page, `${yesterdayRow} td.ledger`), '250.00')
    assert.include(await text(page, `${yesterdayRow} td.difference`), '10.00')
    assert.include(
      (await page.locator(`${yesterdayRow} td.difference`).getAttribute('class')) ?? '',
      'bad-text'
    )
    assert.include(
      await text(page, '#exceptions-list'),
      `bank_day_drift deposit account ${account.id}, ${data.yesterday}: the statement says 240.00 THB net in, the ledger's bank account 250.00`
    )
  })

  test('an operator runs the check: recorded with the operator as actor, audited, the result flashed and shown', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ paymentFeeRateBps: 150 })
    const account = await createDepositAccount()
    const { actor } = await operatorActor('alice@example.com')
    const data = await scenario(who, account.id, actor)

    const operator = await signedInAs('ops@example.com', 'operator')
    contexts.push(operator.context)
    const page = operator.page
    await page.goto(adminUrl('/reconciliation'))
    await Promise.all([page.waitForNavigation(), page.click('#check-now')])

    const runs = await db.from('reconciliation_runs').orderBy('id')
    assert.lengthOf(runs, 1)
    assert.equal(runs[0].actor, 'operator:ops@example.com')
    assert.isFalse(Boolean(runs[0].ok))
    const problems = Number(runs[0].problems)
    assert.isAbove(problems, 0)
    const audit = await db.from('audit_logs').where('action', 'reconciliation.check')
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].actor, 'operator:ops@example.com')
    const details =
      typeof audit[0].details === 'string' ? JSON.parse(audit[0].details) : audit[0].details
    assert.equal(details.problems, problems)
    assert.equal(details.kinds.stale_receivable, 1)
    assert.equal(details.open_receivables, 2)

    // Back on the page it came from, with the result.
    assert.equal(new URL(page.url()).pathname, '/admin/reconciliation')
    assert.equal(new URL(page.url()).searchParams.get('account'), String(account.id))
    const flash = await text(page, '.flash.error')
    assert.include(flash, `Reconciliation check: ${problems} problem`)
    assert.include(flash, 'stale_receivable 1')
    assert.include(await text(page, '#last-check-result'), `${problems} problem`)
    assert.include(await text(page, '#last-check-result'), 'operator:ops@example.com')
    assert.include(await text(page, '#last-check-problems'), data.orders.aged.platformOrderId)

    // Within the window again, the receivable is no problem: an ok check says so.
    await db
      .from('receipt_claims')
      .where('id', data.staleClaimId)
      .update({ claimed_at: new Date() })
    await page.goto(adminUrl('/reconciliation'))
    await Promise.all([page.waitForNavigation(), page.click('#check-now')])
    const second = await db.from('reconciliation_runs').orderBy('id', 'desc').firstOrFail()
    assert.equal(Number(second.problems), problems - 1)
    if (Number(second.problems) === 0) {
      assert.include(await text(page, '.flash.success'), 'Reconciliation check: ok')
      assert.include(await text(page, '#last-check-result'), 'ok')
    } else {
      assert.include(await text(page, '.flash.error'), `${problems - 1} problem`)
    }
    assert.lengthOf(await db.from('audit_logs').where('action', 'reconciliation.check'), 2)

    // A wider range pages its days, newest first.
    const from = data.now.minus({ days: 19 }).toFormat('yyyy-LL-dd')
    await page.goto(adminUrl(`/reconciliation?account=${account.id}&from=${from}&to=${data.today}`))
    assert.equal(await page.locator('#days-table tbody tr').count(), 14)
    assert.equal(
      await page.locator('#days-table tbody tr').first().getAttribute('id'),
      `day-${data.today}`
    )
    await Promise.all([page.waitForNavigation(), page.click('#days-older')])
    assert.equal(await page.locator('#days-table tbody tr').count(), 6)
    assert.equal(
      await page.locator('#days-table tbody tr').last().getAttribute('id'),
      `day-${from}`
    )

    // The page as the runbook shows it: the last check, a stale receivable.
    await db
      .from('receipt_claims')
      .where('id', data.staleClaimId)
      .update({ claimed_at: data.now.minus({ hours: 30 }).toJSDate() })
    await page.goto(adminUrl('/reconciliation'))
    await Promise.all([page.waitForNavigation(), page.click('#check-now')])
    await screenshot(page, 'reconciliation')
    await page.goto(adminUrl('/review/receivables'))
    await screenshot(page, 'review-receivables')

    // A receivable taken back (its money never came) is no longer open, but was opened that day.
    await reverseReceivable(
      {
        platform_order_id: data.orders.waiting.platformOrderId,
        reason_code: 'no_money_received',
        comment: 'the bank has no such transfer',
      },
      actor
    )
    await page.goto(adminUrl('/reconciliation'))
    assert.equal(await text(page, '#receivables-count'), '1')
    assert.equal(await page.locator(`#receivable-${data.waitingClaimId}`).count(), 0)
    assert.include(
      await text(page, `#day-${data.today} td.opened`),
      formatBaht(data.orders.waiting.transferAmount + data.orders.cleared.transferAmount)
    )
    await page.goto(adminUrl('/review/receivables'))
    assert.equal(await page.locator('#receivables-table tbody tr').count(), 1)
  })
})
