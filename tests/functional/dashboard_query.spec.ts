import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { dashboardData } from '#admin/queries/dashboard'
import { dashboardScope, dashboardWindow } from '#admin/queries/dashboard_scope'
import {
  callbackFigures,
  depositFigures,
  matchTimes,
  payoutFigures,
} from '#admin/queries/dashboard_daily'
import { channelUsage, queueDepths, reviewAges } from '#admin/queries/dashboard_queues'
import { formatBaht, presentDashboard, scriptJson } from '#admin/views/dashboard'
import { QUEUE_NAMES } from '#jobs/jobs'
import db from '@adonisjs/lucid/services/db'
import edge from 'edge.js'
import {
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  createTestMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import {
  insertApprovalRequest,
  insertCallback,
  insertLine,
  insertPayment,
  insertPayout,
  insertReceivable,
  insertSlip,
} from '#tests/helpers/dashboard'

/** 12:30 today in Bangkok: the "now" the figures are taken at. */
const NOW = DateTime.now().setZone('Asia/Bangkok').set({ hour: 12, minute: 30 }).startOf('minute')

test.group('dashboard figures', (group) => {
  group.each.setup(() => resetDatabase())

  test('no data at all: zeros, no rate (no division by zero), the page still presents', async ({
    assert,
  }) => {
    const data = await dashboardData(NOW)
    assert.deepEqual(data.window.days.length, 7)
    assert.equal(data.window.today, NOW.toFormat('yyyy-LL-dd'))
    for (const figures of [data.deposits, data.payouts]) {
      assert.equal(figures.week.count, 0)
      assert.equal(figures.week.amount, 0)
      assert.isNull(figures.week.successRate)
      assert.isNull(figures.today.failureRate)
      assert.lengthOf(figures.days, 7)
    }
    assert.deepEqual(data.matching.week, { matched: 0, orderToMatch: null, lineToMatch: null })
    assert.isNull(data.callbacks.week.failureRate)
    assert.deepEqual(data.usage, [])
    assert.deepEqual(
      data.review.queues.map((item) => item.total),
      [0, 0, 0, 0]
    )
    const page = presentDashboard(data)
    assert.equal(page.deposits.today.successRate, '—')
    assert.equal(page.deposits.week.succeededAmount, '0.00')
    assert.equal(page.matching.week.orderToMatch, '—')
    assert.notInclude(JSON.stringify(page), 'NaN')
    assert.notInclude(JSON.stringify(page), 'Infinity')
  })

  test('deposits and payouts per Bangkok day: counts, volume, success and expiry rates', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ channel: 'transfer' })
    const today = (hour: number) => NOW.set({ hour, minute: 5 })
    // Today: 3 paid (100.00 + 250.50 + 1,000.25), 1 expired, 1 refused, 1 open.
    await insertPayment(who, account.id, { at: today(1), amount: 10_000, outcome: 'paid' })
    await insertPayment(who, account.id, { at: today(9), amount: 25_050, outcome: 'paid' })
    await insertPayment(who, account.id, { at: today(11), amount: 100_025, outcome: 'paid' })
    await insertPayment(who, account.id, { at: today(10), amount: 5_000, outcome: 'expired' })
    await insertPayment(who, account.id, { at: today(8), amount: 7_000, outcome: 'rejected' })
    await insertPayment(who, account.id, { at: today(12), amount: 9_000, outcome: 'open' })
    // After "now": not counted yet.
    await insertPayment(who, account.id, { at: today(13), amount: 9_000, outcome: 'paid' })
    // Six days ago (the window's first day): 1 paid, 1 expired.
    const sixDaysAgo = NOW.minus({ days: 6 }).set({ hour: 0, minute: 0 })
    await insertPayment(who, account.id, { at: sixDaysAgo, amount: 50_000, outcome: 'paid' })
    await insertPayment(who, account.id, {
      at: sixDaysAgo.plus({ hours: 20 }),
      amount: 1_000,
      outcome: 'expired',
    })
    // Seven days ago: outside the window.
    await insertPayment(who, account.id, {
      at: sixDaysAgo.minus({ milliseconds: 1 }),
      amount: 70_000,
      outcome: 'paid',
    })

    const payer = await createPayoutMerchant()
    await insertPayout(payer, { at: today(2), amount: 40_000, status: 'success' })
    await insertPayout(payer, { at: today(3), amount: 60_000, status: 'success' })
    await insertPayout(payer, { at: today(4), amount: 10_000, status: 'failed' })
    await insertPayout(payer, { at: today(12), amount: 10_000, status: 'pending' })
    await insertPayout(payer, { at: NOW.minus({ days: 2 }), amount: 30_000, status: 'rejected' })

    const window = dashboardWindow(NOW)
    const deposits = await depositFigures(window)
    assert.deepInclude(deposits.today, {
      count: 6,
      succeeded: 3,
      succeededAmount: 135_075,
      failed: 1,
      open: 1,
      amount: 156_075,
    })
    assert.equal(deposits.today.successRate, 3 / 5)
    assert.equal(deposits.today.failureRate, 1 / 5)
    assert.deepEqual(deposits.days[0], {
      count: 2,
      amount: 51_000,
      succeeded: 1,
      succeededAmount: 50_000,
      failed: 1,
      open: 0,
    })
    assert.deepEqual(
      deposits.days.map((day) => day.count),
      [2, 0, 0, 0, 0, 0, 6]
    )
    assert.equal(deposits.week.count, 8)
    assert.equal(deposits.week.succeededAmount, 185_075)
    assert.equal(deposits.week.successRate, 4 / 7)

    const payouts = await payoutFigures(window)
    assert.deepInclude(payouts.today, {
      count: 4,
      succeeded: 2,
      succeededAmount: 100_000,
      failed: 1,
      open: 1,
    })
    assert.equal(payouts.today.successRate, 2 / 3)
    assert.equal(payouts.week.count, 5)
    assert.equal(payouts.week.failed, 2)

    const page = presentDashboard(await dashboardData(NOW))
    assert.equal(page.deposits.today.count, '6')
    assert.equal(page.deposits.today.succeededAmount, '1,350.75')
    assert.equal(page.deposits.today.successRate, '60.0 %')
    assert.equal(page.deposits.today.failureRate, '20.0 %')
    assert.equal(page.deposits.week.succeededAmount, '1,850.75')
    assert.equal(page.payouts.today.succeededAmount, '1,000.00')
    assert.equal(page.rows[6].depositVolume, '1,350.75')
    assert.isTrue(page.rows[6].today)
  })

  test('midnight in Bangkok (17:00 UTC) divides the days, whatever the UTC date', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const midnight = NOW.startOf('day') // 00:00 Bangkok = 17:00 UTC the day before
    const justAfter = midnight.plus({ seconds: 30 })
    await insertPayment(who, account.id, {
      at: midnight.minus({ milliseconds: 1 }),
      amount: 10_000,
      outcome: 'paid',
    })
    await insertPayment(who, account.id, { at: midnight, amount: 20_000, outcome: 'paid' })
    await insertPayment(who, account.id, {
      at: midnight.plus({ seconds: 10 }),
      amount: 30_000,
      outcome: 'expired',
    })

    const window = dashboardWindow(justAfter)
    assert.equal(window.todayStart.toISO(), midnight.toUTC().toISO())
    assert.equal(window.todayStart.hour, 17)
    const deposits = await depositFigures(window)
    assert.deepInclude(deposits.today, {
      count: 2,
      succeeded: 1,
      succeededAmount: 20_000,
      failed: 1,
    })
    assert.deepInclude(deposits.days[5], { count: 1, succeeded: 1, succeededAmount: 10_000 })
    assert.equal(deposits.today.successRate, 0.5)

    // Exactly at midnight the new day is empty (no rate), yesterday holds the last order.
    const atMidnight = await depositFigures(dashboardWindow(midnight))
    assert.deepInclude(atMidnight.today, { count: 0, succeeded: 0, successRate: null })
    assert.deepInclude(atMidnight.days[5], { count: 1, succeededAmount: 10_000 })
  })

  test('time to match: order to match and bank line to match, by day of the match', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const created = NOW.minus({ hours: 2 })
    const first = await insertPayment(who, account.id, {
      at: created,
      amount: 10_000,
      outcome: 'paid',
    })
    await insertLine(account.id, {
      lineAt: created.plus({ minutes: 3 }),
      amount: 10_000,
      status: 'matched',
      orderId: first,
      matchedAt: created.plus({ minutes: 5 }),
    })
    const second = await insertPayment(who, account.id, {
      at: created,
      amount: 20_000,
      outcome: 'paid',
    })
    await insertLine(account.id, {
      lineAt: created.plus({ minutes: 10 }),
      amount: 20_000,
      status: 'matched',
      orderId: second,
      matchedAt: created.plus({ minutes: 15 }),
    })
    // Matched 3 days ago: in the week, not today.
    const older = await insertPayment(who, account.id, {
      at: NOW.minus({ days: 3 }),
      amount: 30_000,
      outcome: 'paid',
    })
    await insertLine(account.id, {
      lineAt: NOW.minus({ days: 3 }).plus({ minutes: 1 }),
      amount: 30_000,
      status: 'matched',
      orderId: older,
      matchedAt: NOW.minus({ days: 3 }).plus({ minutes: 2 }),
    })
    await insertLine(account.id, {
      lineAt: NOW.minus({ hours: 1 }),
      amount: 55_555,
      status: 'unmatched',
    })

    const times = await matchTimes(dashboardWindow(NOW))
    // Today: (300 + 900) / 2 s from order, (120 + 300) / 2 s from the bank line.
    assert.deepEqual(times.today, { matched: 2, orderToMatch: 600, lineToMatch: 210 })
    assert.deepEqual(times.week, { matched: 3, orderToMatch: 440, lineToMatch: 160 })
    assert.deepEqual(times.days[3], { matched: 1, orderToMatch: 120, lineToMatch: 60 })
    assert.equal(
      presentDashboard(await dashboardData(NOW)).matching.today.orderToMatch,
      '10 min 0 s'
    )
  })

  test('callback failure rate: attempts without HTTP 200, and callbacks given up', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await insertCallback(who, { at: NOW.minus({ hours: 1 }), state: 'delivered', attempts: [200] })
    await insertCallback(who, {
      at: NOW.minus({ hours: 2 }),
      state: 'delivered',
      attempts: [500, 200],
    })
    await insertCallback(who, {
      at: NOW.minus({ hours: 3 }),
      state: 'failed',
      attempts: [null, 503, 500],
    })
    await insertCallback(who, { at: NOW.minus({ days: 2 }), state: 'pending', attempts: [200] })
    await insertCallback(who, { at: NOW.minus({ days: 9 }), state: 'failed', attempts: [500] })

    const figures = await callbackFigures(dashboardWindow(NOW))
    assert.deepEqual(figures.today, { attempts: 6, failedAttempts: 4, failureRate: 4 / 6 })
    assert.deepEqual(figures.week, { attempts: 7, failedAttempts: 4, failureRate: 4 / 7 })
    assert.equal(figures.givenUp, 1)
    assert.equal(figures.pending, 1)
  })

  test('usage against limits per deposit account, in the current Bangkok hour and day', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const limited = await createDepositAccount({
      channel: 'transfer',
      hourlyCountLimit: 10,
      dailyAmountLimit: 100_000,
    })
    const unlimited = await createDepositAccount({ channel: 'qr' })
    await createDepositAccount({ channel: 'qr', active: false })
    await insertPayment(who, limited.id, {
      at: NOW.minus({ minutes: 10 }),
      amount: 30_000,
      outcome: 'paid',
    })
    await insertPayment(who, limited.id, {
      at: NOW.minus({ minutes: 20 }),
      amount: 50_000,
      outcome: 'open',
    })
    await insertPayment(who, limited.id, {
      at: NOW.minus({ hours: 3 }),
      amount: 5_000,
      outcome: 'expired',
    })
    await insertPayment(who, limited.id, {
      at: NOW.minus({ days: 1 }),
      amount: 99_000,
      outcome: 'paid',
    })

    const usage = await channelUsage(dashboardWindow(NOW))
    assert.deepEqual(
      usage.map((account) => account.id),
      [unlimited.id, limited.id]
    )
    const figures = usage.find((account) => account.id === limited.id)!
    assert.deepEqual(figures.hour, { count: 2, countLimit: 10, amount: 80_000, amountLimit: null })
    assert.deepEqual(figures.day, {
      count: 3,
      countLimit: null,
      amount: 85_000,
      amountLimit: 100_000,
    })
    assert.equal(figures.fullest, 0.85)
    assert.isNull(usage.find((account) => account.id === unlimited.id)!.fullest)
  })

  test('open review items by age bucket: frozen, flagged slips, open lines, approvals', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    await insertPayment(who, account.id, {
      at: NOW.minus({ days: 2 }),
      amount: 10_000,
      outcome: 'freeze',
      updatedAt: NOW.minus({ minutes: 30 }),
    })
    await insertPayment(who, account.id, {
      at: NOW.minus({ days: 3 }),
      amount: 10_000,
      outcome: 'freeze',
      updatedAt: NOW.minus({ days: 2 }),
    })
    const flagged = await insertPayment(who, account.id, {
      at: NOW.minus({ hours: 6 }),
      amount: 10_000,
      outcome: 'open',
      awaitingReview: true,
    })
    await insertSlip(who, flagged, { at: NOW.minus({ hours: 5 }) })
    await insertSlip(who, flagged, { at: NOW.minus({ hours: 5 }), decision: 'rejected' })
    const ordinary = await insertPayment(who, account.id, {
      at: NOW.minus({ hours: 6 }),
      amount: 10_000,
      outcome: 'open',
    })
    await insertSlip(who, ordinary, { at: NOW.minus({ hours: 5 }) }) // its order awaits no review
    await insertLine(account.id, {
      lineAt: NOW.minus({ hours: 3 }),
      importedAt: NOW.minus({ hours: 2 }),
      amount: 1_000,
      status: 'unmatched',
    })
    await insertLine(account.id, {
      lineAt: NOW.minus({ hours: 3 }),
      importedAt: NOW.minus({ minutes: 5 }),
      amount: 2_000,
      status: 'late',
    })
    await insertApprovalRequest({ at: NOW.minus({ hours: 30 }), status: 'pending' })
    await insertApprovalRequest({ at: NOW.minus({ hours: 1 }), status: 'approved' })

    const ages = await reviewAges(dashboardWindow(NOW))
    assert.deepEqual(ages.buckets, ['under 1 h', '1–4 h', '4–24 h', 'over 24 h'])
    assert.deepEqual(Object.fromEntries(ages.queues.map((item) => [item.queue, item.counts])), {
      frozen: [1, 0, 0, 1],
      slips: [0, 0, 1, 0],
      lines: [1, 1, 0, 0],
      approvals: [0, 0, 0, 1],
    })
  })

  test('queue depths per BullMQ queue while Redis answers', async ({ assert }) => {
    const depths = await queueDepths()
    assert.isNotNull(depths)
    assert.deepEqual(
      depths!.map((item) => item.name),
      [...QUEUE_NAMES]
    )
    for (const item of depths!) {
      for (const figure of [item.waiting, item.active, item.delayed, item.failed]) {
        assert.isAtLeast(figure, 0)
      }
    }
  })

  test('amounts with thousands separators; the chart JSON cannot close its script element', ({
    assert,
  }) => {
    assert.equal(formatBaht(0), '0.00')
    assert.equal(formatBaht(5), '0.05')
    assert.equal(formatBaht(123_456_789_01), '123,456,789.01')
    const json = scriptJson({ label: '</script><script>alert(1)</script>&' })
    assert.notInclude(json, '<')
    assert.notInclude(json, '>')
    assert.deepEqual(JSON.parse(json), { label: '</script><script>alert(1)</script>&' })
  })

  test('a past day is stored once computed and read again only when due; today is always live', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const twoDaysAgo = NOW.minus({ days: 2 })
    await insertPayment(who, account.id, { at: twoDaysAgo, amount: 10_000, outcome: 'paid' })
    await insertPayment(who, account.id, {
      at: NOW.minus({ hours: 1 }),
      amount: 20_000,
      outcome: 'paid',
    })
    const first = await depositFigures(dashboardWindow(NOW))
    assert.equal(first.days[4].count, 1)
    assert.lengthOf(await db.from('dashboard_daily_rollups').where('figure', 'deposits'), 6)

    // A late change to a past day, and a new order today.
    await insertPayment(who, account.id, { at: twoDaysAgo, amount: 30_000, outcome: 'paid' })
    await insertPayment(who, account.id, {
      at: NOW.minus({ minutes: 5 }),
      amount: 40_000,
      outcome: 'open',
    })
    const soon = await depositFigures(dashboardWindow(NOW.plus({ minutes: 10 })))
    assert.equal(soon.days[4].count, 1, 'the stored day is still fresh')
    assert.equal(soon.today.count, 2, 'today is read live')

    // Once due, one stored day per view is read again, the newest first:
    // yesterday, then the day before.
    const later = dashboardWindow(NOW.plus({ minutes: 61 }))
    assert.equal((await depositFigures(later)).days[4].count, 1)
    const after = await depositFigures(later)
    assert.deepInclude(after.days[4], { count: 2, succeededAmount: 40_000 })
    assert.equal(after.week.count, 4)
    const refreshed = await db
      .from('dashboard_daily_rollups')
      .where('figure', 'deposits')
      .orderBy('day')
    assert.deepEqual(
      refreshed.map((row) => DateTime.fromJSDate(row.computed_at).toMillis()),
      [...Array(4).fill(NOW.toMillis()), later.now.toMillis(), later.now.toMillis()]
    )
  })

  test('Redis unavailable: the queue panel says so, the rest of the page renders', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    await insertPayment(who, account.id, {
      at: NOW.minus({ hours: 1 }),
      amount: 123_456,
      outcome: 'paid',
    })
    const data = await dashboardData(NOW)
    const html = await edge.render('admin/dashboard', presentDashboard({ ...data, queues: null }))
    assert.include(html, 'id="queues-unavailable"')
    assert.include(html, 'Unavailable: Redis did not answer.')
    assert.notInclude(html, 'id="queues-table"')
    assert.include(html, '1,234.56')
    assert.include(html, 'id="chart-deposits"')
  })
})

test.group('dashboard figures filtered by platform and merchant', (group) => {
  group.each.setup(() => resetDatabase())

  /** Two merchants on platform "test", one on platform "other", each with its own orders. */
  async function threeMerchants() {
    const first = await createDepositMerchant()
    const second = await createDepositMerchant()
    const elsewhere = await createTestMerchant('other')
    elsewhere.merchant.merge({ depositGroup: 'test-group' })
    await elsewhere.merchant.save()
    const account = await createDepositAccount({ channel: 'transfer' })
    const today = (hour: number) => NOW.set({ hour, minute: 5 })
    const yesterday = NOW.minus({ days: 1 }).set({ hour: 9 })
    // Today: first 1 paid (100.00), second 2 paid (200.00 + 300.00), elsewhere 3 paid (4,000.00 each).
    const firstPaid = await insertPayment(first, account.id, {
      at: today(1),
      amount: 10_000,
      outcome: 'paid',
    })
    await insertPayment(second, account.id, { at: today(2), amount: 20_000, outcome: 'paid' })
    await insertPayment(second, account.id, { at: today(3), amount: 30_000, outcome: 'paid' })
    for (const hour of [4, 5, 6]) {
      await insertPayment(elsewhere, account.id, {
        at: today(hour),
        amount: 400_000,
        outcome: 'paid',
      })
    }
    // Yesterday (a stored day once computed): first 1 expired, elsewhere 2 expired.
    await insertPayment(first, account.id, { at: yesterday, amount: 5_000, outcome: 'expired' })
    await insertPayment(elsewhere, account.id, { at: yesterday, amount: 5_000, outcome: 'expired' })
    await insertPayment(elsewhere, account.id, { at: yesterday, amount: 5_000, outcome: 'expired' })
    // Frozen: one of second's, one elsewhere.
    await insertPayment(second, account.id, { at: today(7), amount: 1_000, outcome: 'freeze' })
    await insertPayment(elsewhere, account.id, { at: today(7), amount: 1_000, outcome: 'freeze' })
    // Payouts: second 1 sent, elsewhere 2 sent.
    await insertPayout(second, { at: today(2), amount: 50_000, status: 'success' })
    await insertPayout(elsewhere, { at: today(2), amount: 70_000, status: 'success' })
    await insertPayout(elsewhere, { at: today(3), amount: 70_000, status: 'failed' })
    // Callbacks: first 1 failed attempt, elsewhere 3 good ones and one given up.
    await insertCallback(first, { at: today(2), state: 'delivered', attempts: [500, 200] })
    await insertCallback(elsewhere, { at: today(2), state: 'delivered', attempts: [200] })
    await insertCallback(elsewhere, { at: today(3), state: 'failed', attempts: [500] })
    // A match for first's order; an unmatched line (no merchant).
    await insertLine(account.id, {
      lineAt: today(1).plus({ minutes: 2 }),
      amount: 10_000,
      status: 'matched',
      orderId: firstPaid,
      matchedAt: today(1).plus({ minutes: 4 }),
    })
    await insertLine(account.id, { lineAt: today(5), amount: 777, status: 'unmatched' })
    // An open receivable elsewhere.
    const credited = await insertPayment(elsewhere, account.id, {
      at: today(8),
      amount: 9_900,
      outcome: 'paid',
    })
    await insertReceivable(elsewhere, account.id, credited, { at: today(8), amount: 9_900 })
    return { first, second, elsewhere }
  }

  test('a merchant or a platform counts only its own orders, on every figure', async ({
    assert,
  }) => {
    const { first, second, elsewhere } = await threeMerchants()
    const testPlatform = first.merchant.platformId
    const otherPlatform = elsewhere.merchant.platformId
    assert.notEqual(testPlatform, otherPlatform)

    // Unfiltered first: yesterday's figures are stored for "every merchant"…
    const all = await dashboardData(NOW)
    assert.isFalse(all.filtered)
    assert.equal(all.deposits.today.count, 9)
    assert.equal(all.deposits.days[5].failed, 3)

    // …and a filter keeps its own stored days: yesterday is first's alone.
    const onlyFirst = await dashboardData(NOW, { platformId: null, merchantId: first.merchant.id })
    assert.isTrue(onlyFirst.filtered)
    assert.deepInclude(onlyFirst.deposits.today, { count: 1, succeededAmount: 10_000 })
    assert.deepInclude(onlyFirst.deposits.days[5], { count: 1, failed: 1 })
    assert.equal(onlyFirst.payouts.today.count, 0)
    assert.equal(onlyFirst.matching.today.matched, 1)
    assert.deepInclude(onlyFirst.callbacks.today, { attempts: 2, failedAttempts: 1 })
    assert.equal(onlyFirst.callbacks.givenUp, 0)
    assert.equal(onlyFirst.receivables.open, 0)
    const frozen = (data: typeof all) =>
      data.review.queues.find((item) => item.queue === 'frozen')!.total
    assert.equal(frozen(onlyFirst), 0)
    // Bank lines not yet matched belong to no merchant: counted, and marked so.
    const lines = onlyFirst.review.queues.find((item) => item.queue === 'lines')!
    assert.equal(lines.total, 1)
    assert.isTrue(lines.allMerchants)

    const onlySecond = await dashboardData(NOW, {
      platformId: null,
      merchantId: second.merchant.id,
    })
    assert.deepInclude(onlySecond.deposits.today, { count: 3, succeededAmount: 50_000 })
    assert.deepInclude(onlySecond.payouts.today, { count: 1, succeededAmount: 50_000 })
    assert.equal(onlySecond.matching.today.matched, 0)
    assert.equal(onlySecond.callbacks.today.attempts, 0)
    assert.equal(frozen(onlySecond), 1)

    // Platform "test": first and second together, nothing of "other".
    const testOnly = await dashboardData(NOW, { platformId: testPlatform, merchantId: null })
    assert.deepInclude(testOnly.deposits.today, { count: 4, succeededAmount: 60_000 })
    assert.deepInclude(testOnly.deposits.days[5], { count: 1, failed: 1 })
    assert.deepInclude(testOnly.payouts.today, { count: 1, succeededAmount: 50_000 })
    assert.equal(frozen(testOnly), 1)
    assert.equal(testOnly.receivables.open, 0)

    // Platform "other": its one merchant's figures.
    const other = await dashboardData(NOW, { platformId: otherPlatform, merchantId: null })
    assert.deepInclude(other.deposits.today, { count: 5, succeededAmount: 1_209_900 })
    assert.deepInclude(other.deposits.days[5], { count: 2, failed: 2 })
    assert.deepInclude(other.payouts.today, { count: 2, succeeded: 1, failed: 1 })
    assert.deepInclude(other.callbacks.today, { attempts: 2, failedAttempts: 1 })
    assert.equal(other.callbacks.givenUp, 1)
    assert.deepInclude(other.receivables, { open: 1, amount: 9_900 })
    const page = presentDashboard(other)
    assert.equal(page.deposits.today.succeededAmount, '12,099.00')

    // Platform and merchant together narrow to the merchant; a merchant of
    // another platform leaves nothing.
    const both = await dashboardData(NOW, {
      platformId: testPlatform,
      merchantId: second.merchant.id,
    })
    assert.equal(both.deposits.today.count, 3)
    const none = await dashboardData(NOW, {
      platformId: otherPlatform,
      merchantId: first.merchant.id,
    })
    assert.equal(none.deposits.today.count, 0)
    assert.equal(none.deposits.week.count, 0)

    // Unfiltered again: the stored days were not overwritten by a filter's.
    const again = await dashboardData(NOW)
    assert.equal(again.deposits.days[5].failed, 3)
  })

  test('usage against limits, filtered: the accounts of the merchants deposit groups', async ({
    assert,
  }) => {
    const inGroup = await createDepositMerchant()
    const elsewhere = await createTestMerchant('other')
    elsewhere.merchant.merge({ depositGroup: 'other-group' })
    await elsewhere.merchant.save()
    const account = await createDepositAccount()
    const window = dashboardWindow(NOW)
    const ids = async (merchantId: number) =>
      (
        await channelUsage(
          window,
          await dashboardScope({ platformId: null, merchantId: merchantId })
        )
      ).map((usage) => usage.id)
    assert.deepEqual(await ids(inGroup.merchant.id), [account.id])
    assert.deepEqual(await ids(elsewhere.merchant.id), [])
  })
})
