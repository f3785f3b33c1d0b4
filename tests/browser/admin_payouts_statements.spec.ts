import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Download, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import PayoutOrder from '#payouts/models/payout_order'
import Merchant from '#merchants/models/merchant'
import { expirePayment } from '#payments/actions/expire_payment'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { releasePayoutHold } from '#payouts/actions/complete_payout'
import { exportBulkFile } from '#payouts/actions/export_bulk_file'
import { orderTimeline } from '#core/order_events'
import { formatAmount } from '#core/money'
import { GATEWAY_ZONE } from '#core/clock'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'
import { approveRequest } from '#approvals/actions/approve_request'
import { operatorActor } from '#tests/helpers/decisions'

let sequence = 0

async function createPayment(who: TestMerchant, amount: string) {
  sequence += 1
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `PS${sequence}`,
      amount,
      bank: 'SCB',
      account_name: 'Customer',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PaymentOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}

/** A withdrawal through the merchant API; its payout order row. */
async function createWithdrawal(
  who: TestMerchant,
  fields: { amount: string; bank?: string; account_no?: string }
) {
  sequence += 1
  const response = await signedPost(
    '/withdraw/create',
    who,
    authBody(who, {
      merchant_order_id: `WD${sequence}`,
      bank: 'KBANK',
      account_name: 'Somchai Jaidee',
      account_no: `55500${String(sequence).padStart(5, '0')}`,
      ...fields,
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  return PayoutOrder.findByOrFail('platform_order_id', response.json.data.platform_order_id)
}

/** A bulk-file withdrawal waiting in queue for its bank's file. */
async function queuedWithdrawal(who: TestMerchant, amount: string, bank = 'KBANK') {
  const order = await createWithdrawal(who, { amount, bank })
  if ((await dispatchPayout(order.id)) !== 'queued') throw new Error('not queued')
  return order.refresh()
}

async function balance(who: TestMerchant) {
  return (await signedPost('/balance', who, authBody(who))).json.data
}

/** A neutral-layout statement: one line per [time, direction, amount, description]. */
function neutralStatement(lines: Array<[DateTime, 'credit' | 'debit', string, string]>) {
  return [
    'date_time,direction,amount,reference,description',
    ...lines.map(
      ([at, direction, amount, description]) =>
        `${at.setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd HH:mm')},${direction},${amount},,${description}`
    ),
  ].join('\n')
}

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

async function auditRows(action: string) {
  const rows = await db
    .from('audit_logs')
    .where('action', action)
    .orderBy('id')
    .select(
      'actor',
      'subject_type',
      'subject_id',
      'before_values',
      'after_values',
      'comment',
      'details'
    )
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value)
  return rows.map((row) => ({
    ...row,
    before_values: json(row.before_values),
    after_values: json(row.after_values),
    details: json(row.details),
  }))
}

async function downloaded(download: Download) {
  return readFile((await download.path())!, 'utf8')
}

/**
 * The payouts and statements workbench in headless Chromium: statement
 * upload and its result, bulk payout files, the bank's answer recorded by
 * hand, dispatch retried, negative balances; checked in the database, on the
 * merchant API and in the audit log.
 */
test.group('back-office payouts and statements (browser)', (group) => {
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

  async function temporaryDirectory() {
    const path = await mkdtemp(join(tmpdir(), 'gw-admin-'))
    leftovers.push(path)
    return path
  }

  test('a statement uploaded through the page pays its open order once; the same file again adds nothing', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'qr' })
    const open = await createPayment(who, '100.00')
    const expired = await createPayment(who, '200.00')
    assert.isTrue(await expirePayment(expired.id, DateTime.utc().plus({ hours: 1 })))
    const now = DateTime.utc()
    const path = join(await temporaryDirectory(), 'statement-today.csv')
    await writeFile(
      path,
      neutralStatement([
        [now, 'credit', formatAmount(open.transferAmount), 'TRANSFER FROM SCB X7890'],
        [now, 'credit', formatAmount(expired.transferAmount), 'TRANSFER FROM SCB X7890'],
        [now, 'credit', '55.55', 'TRANSFER FROM NOBODY'],
      ])
    )
    const page = await signedIn('operator@example.com', 'operator')

    // Nothing chosen: refused beside the fields, nothing imported.
    await page.goto(adminUrl('/statements'))
    await submit(page, '#statement-upload')
    assert.include(await page.locator('#error-file').innerText(), 'file is required')
    assert.lengthOf(await db.from('statement_imports'), 0)

    // A file the layout cannot read: refused beside the file, the choices kept.
    const broken = join(await temporaryDirectory(), 'broken.csv')
    await writeFile(broken, 'date_time,amount\n2026-11-21 10:00,100.00\n')
    await page.selectOption('#field-deposit_account_id', String(account.id))
    await page.setInputFiles('#field-file', broken)
    await submit(page, '#statement-upload')
    assert.include(await page.locator('#error-file').innerText(), 'missing column(s) direction')
    assert.equal(await page.inputValue('#field-deposit_account_id'), String(account.id))
    assert.lengthOf(await db.from('statement_imports'), 0)

    // A line dated 10 minutes after the upload: refused beside the file, naming
    // the file's own line (the header is line 1), nothing imported.
    const future = join(await temporaryDirectory(), 'future.csv')
    await writeFile(
      future,
      neutralStatement([
        [now, 'credit', '10.00', 'TRANSFER'],
        [now.plus({ minutes: 10 }), 'credit', '20.00', 'TRANSFER'],
      ])
    )
    await page.selectOption('#field-deposit_account_id', String(account.id))
    await page.setInputFiles('#field-file', future)
    await submit(page, '#statement-upload')
    const futureError = await page.locator('#error-file').innerText()
    assert.include(futureError, 'Nothing imported: future.csv, neutral: line 3: ')
    assert.include(futureError, 'is in the future')
    assert.lengthOf(await db.from('statement_imports'), 0)
    assert.lengthOf(await db.from('statement_lines'), 0)

    await page.selectOption('#field-layout', 'neutral')
    await page.setInputFiles('#field-file', path)
    await submit(page, '#statement-upload')
    assert.match(page.url(), /\/admin\/statements\/imports\/\d+$/)
    assert.include(
      await page.locator('.flash.success').innerText(),
      'statement-today.csv: 3 lines, 3 new: 1 matched, 1 late, 1 unmatched'
    )
    for (const [id, figure] of [
      ['lines', '3'],
      ['new', '3'],
      ['matched', '1'],
      ['late', '1'],
      ['unmatched', '1'],
    ]) {
      assert.equal(await page.locator(`#count-${id}`).innerText(), figure, id)
    }
    assert.equal((await open.refresh()).status, 'unsettled_paid')
    assert.equal((await expired.refresh()).status, 'error')
    // This import's lines still waiting for an operator: the late one names its expired order.
    const waiting = await page.locator('#waiting-lines tbody tr').allInnerTexts()
    assert.lengthOf(waiting, 2)
    assert.include(waiting.join('\n'), '55.55')
    assert.equal(
      await page
        .locator(`#waiting-lines a[href="/admin/orders/${expired.platformOrderId}"]`)
        .count(),
      1
    )
    await screenshot(page, 'statement-import')

    const audits = await auditRows('statement.import')
    assert.lengthOf(audits, 1)
    assert.equal(audits[0].actor, 'operator:operator@example.com')
    assert.equal(audits[0].subject_id, String(account.id))
    assert.equal(audits[0].details.file, 'statement-today.csv')
    assert.equal(audits[0].details.new_lines, 3)

    // The same file again: a new import row, no new line, no second payment.
    await page.goto(adminUrl('/statements'))
    await page.selectOption('#field-deposit_account_id', String(account.id))
    await page.setInputFiles('#field-file', path)
    await submit(page, '#statement-upload')
    assert.include(
      await page.locator('.flash.success').innerText(),
      'statement-today.csv: 3 lines, 0 new: 0 matched, 0 late, 0 unmatched'
    )
    assert.equal(await page.locator('#count-new').innerText(), '0')
    assert.equal(await page.locator('#count-matched').innerText(), '0')
    assert.lengthOf(await db.from('statement_lines'), 3)
    assert.lengthOf(await db.from('ledger_transactions').where('kind', 'payment_paid'), 1)
    assert.equal((await open.refresh()).status, 'unsettled_paid')
    assert.deepEqual(await balance(who), { balance: 0, freeze_balance: 0, unsettle_balance: 100 })

    // Past imports, newest first, and today's match rate of the account: 1 line of 3.
    await page.goto(adminUrl('/statements'))
    const imports = await page.locator('#imports-table tbody tr').allInnerTexts()
    assert.lengthOf(imports, 2)
    assert.match(imports[0], /statement-today\.csv[\s\S]*\b3\s+0\s+0\s+0\s+0\b/)
    assert.match(imports[1], /statement-today\.csv[\s\S]*\b3\s+3\s+1\s+1\s+1\b/)
    const today = DateTime.utc().setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd')
    const cell = page.locator(`#rate-account-${account.id} td[data-day="${today}"]`)
    assert.include(await cell.innerText(), '33 %')
    assert.include(await cell.innerText(), '1/3')
    assert.equal(await page.locator(`#rate-account-${account.id} td.none`).count(), 13)
    await screenshot(page, 'statements')
  })

  test('a bank’s bulk payout file holds its queued payouts and marks them pending; the answers recorded by hand, audited', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(10_000_00, { payoutRoute: 'bulk_file' })
    const first = await queuedWithdrawal(who, '1500.50')
    const second = await queuedWithdrawal(who, '250.00')
    const other = await queuedWithdrawal(who, '99.90', 'SCB')
    const page = await signedIn('operator@example.com', 'operator')

    await page.goto(adminUrl('/payouts'))
    assert.include(await page.locator('#bulk-KBANK').innerText(), '1,750.50')
    assert.match(await page.locator('#bulk-KBANK').innerText(), /\b2\b/)
    assert.match(await page.locator('#bulk-SCB').innerText(), /\b1\b/)
    assert.include(await page.locator(`#payout-${first.platformOrderId}`).innerText(), 'queue')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#bulk-KBANK button[type=submit]'),
    ])
    assert.match(download.suggestedFilename(), /^B\d{14}[A-Z0-9]{6}-KBANK\.csv$/)
    // The server keeps the file (tmp/payouts) to download again; not after this test.
    leftovers.push(app.makePath('tmp/payouts', download.suggestedFilename()))
    const csv = await downloaded(download)
    const lines = csv.trim().split('\r\n')
    assert.equal(lines[0], 'reference,bank_code,bank,account_no,account_name,amount')
    assert.lengthOf(lines, 3)
    assert.include(
      csv,
      `${first.platformOrderId},004,KBANK,${first.accountNo},Somchai Jaidee,1500.50`
    )
    assert.include(
      csv,
      `${second.platformOrderId},004,KBANK,${second.accountNo},Somchai Jaidee,250.00`
    )
    assert.notInclude(csv, other.platformOrderId)

    const batch = download.suggestedFilename().slice(0, 21)
    for (const order of [first, second]) {
      await order.refresh()
      assert.equal(order.status, 'pending')
      assert.equal(order.batchId, batch)
    }
    assert.equal((await other.refresh()).status, 'queue')
    const exports = await auditRows('payouts.export')
    assert.lengthOf(exports, 1)
    assert.equal(exports[0].actor, 'operator:operator@example.com')
    assert.equal(exports[0].subject_id, batch)
    assert.deepEqual(exports[0].details.bank, 'KBANK')
    assert.equal(exports[0].details.orders, 2)

    // The list now: KBANK has nothing left to export; the file can be downloaded again.
    await page.reload()
    assert.equal(await page.locator('#bulk-KBANK').count(), 0)
    assert.include(await page.locator(`#payout-${first.platformOrderId}`).innerText(), 'pending')
    const [again] = await Promise.all([
      page.waitForEvent('download'),
      page.click(`#recent-files a:has-text("${download.suggestedFilename()}")`),
    ])
    assert.equal(await downloaded(again), csv)
    assert.lengthOf(await auditRows('payouts.file_download'), 1)

    // Exporting the bank again writes nothing.
    const empty = await page.request.post(adminUrl('/payouts/export'), {
      form: { _csrf: (await csrfToken(page))!, bank: 'KBANK' },
      maxRedirects: 0,
    })
    assert.equal(empty.status(), 302)
    assert.lengthOf(await auditRows('payouts.export'), 1)

    // The bank's answer for the first: unconfirmed, refused beside the box.
    await page.goto(adminUrl('/payouts'))
    await Promise.all([
      page.waitForNavigation(),
      page.click(`#payout-${first.platformOrderId} a:has-text("Record the bank's answer")`),
    ])
    await page.selectOption('#field-outcome', 'success')
    await submit(page, '#outcome-form')
    assert.include(await page.locator('#error-confirm').innerText(), 'tick the box')
    assert.equal(await page.inputValue('#field-outcome'), 'success')
    assert.equal((await first.refresh()).status, 'pending')

    await page.check('#field-confirm')
    await submit(page, '#outcome-form')
    assert.match(page.url(), /\/admin\/payouts$/)
    assert.include(
      await page.locator('.flash.success').innerText(),
      `${first.platformOrderId}: success recorded`
    )
    assert.equal((await first.refresh()).status, 'success')

    // The second failed: a reason is required, then kept as failure_reason.
    await page.goto(adminUrl(`/payouts/${second.platformOrderId}`))
    await page.selectOption('#field-outcome', 'failed')
    await page.check('#field-confirm')
    await submit(page, '#outcome-form')
    assert.include(
      await page.locator('#error-reason').innerText(),
      'reason is required when the outcome is failed'
    )
    await page.fill('#field-reason', 'account_closed')
    await page.check('#field-confirm')
    await submit(page, '#outcome-form')
    // Failed gives the hold back on one person's word: it waits for a second operator.
    const flash = await page.locator('.flash.success').innerText()
    assert.include(flash, `${second.platformOrderId}: approval request #`)
    assert.equal((await second.refresh()).status, 'pending')
    const requestId = Number(/approval request #(\d+)/.exec(flash)![1])
    const colleague = await operatorActor('colleague@example.com')
    await approveRequest(
      { approval_request_id: requestId, comment: 'seen on the bank report' },
      colleague.actor
    )
    await second.refresh()
    assert.equal(second.status, 'failed')
    assert.equal(second.failureReason, 'account_closed')

    // Money: the first left frozen, the second went back; SCB still held.
    assert.deepEqual(await balance(who), {
      balance: 8399.6,
      freeze_balance: 99.9,
      unsettle_balance: 0,
    })

    // Submitted again (a double click): refused, nothing written twice.
    await page.goto(adminUrl(`/payouts/${second.platformOrderId}`))
    const token = (await csrfToken(page))!
    const twice = await page.request.post(adminUrl(`/payouts/${first.platformOrderId}/outcome`), {
      form: { _csrf: token, outcome: 'success', confirm: 'on' },
      maxRedirects: 0,
    })
    assert.equal(twice.status(), 302)
    await page.goto(adminUrl('/payouts'))
    assert.include(
      await page.locator('.flash.error').innerText(),
      'only a pending payout can be completed'
    )

    const answers = await auditRows('payout.complete')
    assert.deepEqual(
      answers.map((row) => [row.actor, row.subject_id, row.before_values, row.after_values]),
      [
        [
          'operator:operator@example.com',
          first.platformOrderId,
          { status: 'pending', hold_state: 'held' },
          { status: 'success', hold_state: 'consumed' },
        ],
        [
          'operator:colleague@example.com',
          second.platformOrderId,
          { status: 'pending', hold_state: 'held', failure_reason: null },
          { status: 'failed', hold_state: 'returned', failure_reason: 'account_closed' },
        ],
      ]
    )
    assert.equal(answers[1].comment, 'account_closed')
    const timeline = await orderTimeline('withdraw', first.id)
    assert.equal(timeline.at(-1)!.actor, 'operator:operator@example.com')
    assert.equal(timeline.at(-1)!.toStatus, 'success')
  })

  test('a dispatch retried where the state table allows it, with the operator on the timeline', async ({
    assert,
  }) => {
    // Sandbox route: dispatched one by one; no worker runs here, so the order stays new.
    const direct = await createPayoutMerchant(1_000_00)
    const order = await createWithdrawal(direct, { amount: '100.00' })
    assert.equal(order.status, 'new')
    const bulk = await createPayoutMerchant(1_000_00, { payoutRoute: 'bulk_file' })
    const queued = await queuedWithdrawal(bulk, '100.00')
    const page = await signedIn('operator@example.com', 'operator')

    await page.goto(adminUrl('/payouts'))
    const row = page.locator(`#payout-${order.platformOrderId}`)
    assert.include(await row.locator('.status').innerText(), 'new')
    assert.equal(await row.locator('.status').getAttribute('title'), 'not dispatched yet')
    // A bulk-file order in queue waits for its file: no retry.
    assert.equal(await page.locator(`#payout-${queued.platformOrderId} .retry-dispatch`).count(), 0)
    await Promise.all([page.waitForNavigation(), row.locator('.retry-dispatch button').click()])
    assert.include(
      await page.locator('.flash.success').innerText(),
      `${order.platformOrderId}: dispatch retried (new → pending)`
    )
    await order.refresh()
    assert.equal(order.status, 'pending')
    assert.match(order.connectorReference!, /^SBXB/)
    const timeline = await orderTimeline('withdraw', order.id)
    assert.deepEqual(
      timeline.map((event) => [event.fromStatus, event.toStatus, event.actor]),
      [
        [null, 'new', `merchant:${direct.merchantId}`],
        ['new', 'queue', 'operator:operator@example.com'],
        ['queue', 'pending', 'operator:operator@example.com'],
      ]
    )
    const retries = await auditRows('payout.dispatch_retry')
    assert.lengthOf(retries, 1)
    assert.equal(retries[0].subject_id, order.platformOrderId)
    assert.deepEqual(retries[0].before_values.status, 'new')
    assert.include(await row.innerText(), "Record the bank's answer")
    assert.equal(await row.locator('.retry-dispatch').count(), 0)

    // Where the state table does not allow it, the server refuses: pending, and a queued bulk-file order.
    for (const [target, refusal] of [
      [order, `${order.platformOrderId} is pending`],
      [queued, "waits in queue for its bank's next bulk payout file"],
    ] as const) {
      const refused = await page.request.post(
        adminUrl(`/payouts/${target.platformOrderId}/retry`),
        { form: { _csrf: (await csrfToken(page))! }, maxRedirects: 0 }
      )
      assert.equal(refused.status(), 302)
      await page.goto(adminUrl('/payouts'))
      assert.include(await page.locator('.flash.error').innerText(), refusal)
    }
    await page.goto(adminUrl(`/payouts/${queued.platformOrderId}`))
    assert.include(
      await page.locator('#retry-refusal').innerText(),
      "waits in queue for its bank's next bulk payout file"
    )
    assert.equal((await queued.refresh()).status, 'queue')
    assert.lengthOf(await auditRows('payout.dispatch_retry'), 1)
  })

  test('a viewer sees the payouts and statements but cannot act: the server refuses its POSTs (403)', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(1_000_00, { payoutRoute: 'bulk_file' })
    const queued = await queuedWithdrawal(who, '100.00')
    const pending = await queuedWithdrawal(who, '200.00', 'SCB')
    await exportBulkFile({ directory: await temporaryDirectory(), bank: 'SCB' }, TEST_ACTOR)
    assert.equal((await pending.refresh()).status, 'pending')
    const account = await createDepositAccount({ channel: 'qr' })
    const page = await signedIn('viewer@example.com', 'viewer')

    await page.goto(adminUrl('/payouts'))
    assert.include(await page.locator(`#payout-${queued.platformOrderId}`).innerText(), 'queue')
    assert.include(await page.locator(`#payout-${pending.platformOrderId}`).innerText(), 'pending')
    assert.include(await page.locator('#bulk-KBANK').innerText(), '100.00')
    assert.equal(await page.locator('main form[method=POST]').count(), 0)
    await page.goto(adminUrl(`/payouts/${pending.platformOrderId}`))
    assert.equal(await page.locator('main form[method=POST]').count(), 0)
    await page.goto(adminUrl('/statements'))
    assert.equal(await page.locator('#statement-upload').count(), 0)
    assert.equal(await page.locator('#match-rate-table').count(), 1)

    const token = (await csrfToken(page))!
    const posts: Array<[string, Record<string, unknown>]> = [
      ['/payouts/export', { form: { _csrf: token, bank: 'KBANK' } }],
      [
        `/payouts/${pending.platformOrderId}/outcome`,
        { form: { _csrf: token, outcome: 'success', confirm: 'on' } },
      ],
      [`/payouts/${queued.platformOrderId}/retry`, { form: { _csrf: token } }],
      [
        '/statements',
        {
          multipart: {
            _csrf: token,
            deposit_account_id: String(account.id),
            layout: 'neutral',
            file: {
              name: 'statement.csv',
              mimeType: 'text/csv',
              buffer: Buffer.from(neutralStatement([[DateTime.utc(), 'credit', '100.00', 'X']])),
            },
          },
        },
      ],
    ]
    for (const [path, options] of posts) {
      const response = await page.request.post(adminUrl(path), { ...options, maxRedirects: 0 })
      assert.equal(response.status(), 403, path)
    }
    const file = await page.request.get(adminUrl('/payouts/files/B20260101000000ABCDEF-SCB.csv'), {
      maxRedirects: 0,
    })
    assert.equal(file.status(), 403)

    assert.equal((await queued.refresh()).status, 'queue')
    assert.equal((await pending.refresh()).status, 'pending')
    assert.lengthOf(await db.from('statement_imports'), 0)
    const actions = await db
      .from('audit_logs')
      .where('actor', 'like', 'operator:%')
      .select('action')
    assert.notIncludeMembers(
      actions.map((row) => row.action),
      ['payouts.export', 'payout.complete', 'payout.dispatch_retry', 'statement.import']
    )
  })

  test('a late success after a released hold lists the merchant with its negative balance and the order', async ({
    assert,
  }) => {
    const who = await createPayoutMerchant(500_00, { payoutRoute: 'bulk_file' })
    const late = await queuedWithdrawal(who, '300.00')
    // Still waiting for its file when the hold period ends: the hold goes back to
    // balance, the order stays open (once its file is at the bank it would keep it).
    await PayoutOrder.query()
      .where('id', late.id)
      .update({ hold_expires_at: DateTime.utc().minus({ seconds: 1 }).toJSDate() })
    assert.isTrue(await releasePayoutHold(late.id))
    await exportBulkFile({ directory: await temporaryDirectory(), bank: 'KBANK' }, TEST_ACTOR)
    // The merchant spends it meanwhile.
    const spend = await createWithdrawal(who, { amount: '400.00' })
    assert.deepEqual(await balance(who), { balance: 100, freeze_balance: 400, unsettle_balance: 0 })

    // Other payouts waiting, as an operator's day has them.
    const sandbox = await createPayoutMerchant(2_000_00)
    await createWithdrawal(sandbox, { amount: '750.00', bank: 'SCB' })
    const elsewhere = await createPayoutMerchant(5_000_00, { payoutRoute: 'bulk_file' })
    await queuedWithdrawal(elsewhere, '1200.00', 'BBL')
    await queuedWithdrawal(elsewhere, '80.25', 'BBL')
    const handedOver = await queuedWithdrawal(elsewhere, '2500.00', 'SCB')
    await exportBulkFile({ directory: await temporaryDirectory(), bank: 'SCB' }, TEST_ACTOR)

    const page = await signedIn('operator@example.com', 'operator')
    await page.goto(adminUrl('/payouts'))
    assert.include(await page.locator('#negative-table').innerText(), 'No merchant is flagged')

    // The bank confirms the old transfer now: debited from balance, below zero.
    await page.goto(adminUrl(`/payouts/${late.platformOrderId}`))
    await page.selectOption('#field-outcome', 'success')
    await page.check('#field-confirm')
    await submit(page, '#outcome-form')
    assert.include(await page.locator('.flash.success').innerText(), 'success recorded')
    assert.deepEqual(await balance(who), {
      balance: -200,
      freeze_balance: 400,
      unsettle_balance: 0,
    })
    assert.isTrue((await Merchant.findOrFail(who.merchant.id)).negativeBalanceFlag)

    const listed = page.locator(`#negative-${who.merchantId}`)
    assert.include(await listed.innerText(), '-200.00')
    assert.equal(await listed.locator(`a[href="/admin/orders/${late.platformOrderId}"]`).count(), 1)
    assert.equal(
      await listed.locator(`a[href="/admin/orders/${spend.platformOrderId}"]`).count(),
      0
    )
    assert.equal(await page.locator('#negative-table tbody tr').count(), 1)

    // Filters: by route and by merchant.
    await page.goto(adminUrl(`/payouts?route=bulk_file&bank=BBL`))
    assert.equal(await page.locator('#payouts-table tbody tr').count(), 2)
    await page.goto(adminUrl(`/payouts?merchant=${who.merchantId}`))
    const rows = await page.locator('#payouts-table tbody tr').allInnerTexts()
    assert.lengthOf(rows, 1)
    assert.include(rows[0], spend.platformOrderId)

    await page.goto(adminUrl('/payouts'))
    assert.include(
      await page.locator(`#payout-${handedOver.platformOrderId}`).innerText(),
      "Record the bank's answer"
    )
    await screenshot(page, 'payouts')
    await page.goto(adminUrl(`/payouts/${handedOver.platformOrderId}`))
    assert.include(await page.locator('#payout-timeline').innerText(), 'bulk file')
    await screenshot(page, 'payout')
  })
})
