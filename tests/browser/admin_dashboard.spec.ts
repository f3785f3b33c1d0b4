import { test } from '@japa/runner'
import { formatSeconds } from '#admin/views/dashboard'
import { DateTime } from 'luxon'
import type { BrowserContext, Page } from 'playwright-core'
import { GATEWAY_ZONE } from '#core/clock'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import db from '@adonisjs/lucid/services/db'
import {
  createDepositAccount,
  createDepositMerchant,
  createPayoutMerchant,
  createTestMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'
import {
  insertApprovalRequest,
  insertCallback,
  insertLine,
  insertPayment,
  insertPayout,
  insertReceivable,
  insertSlip,
  type PaymentOutcome,
} from '#tests/helpers/dashboard'

/**
 * The dashboard in headless Chromium, signed in as a viewer: the figures of
 * seeded orders over today and the last 7 days, in the cards and the tables,
 * and the charts drawn by Chart.js under the back-office's CSP.
 */
test.group('back-office dashboard (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(() => resetDatabase())
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  test('a viewer sees today and the week in figures, tables and drawn charts', async ({
    assert,
  }) => {
    const now = DateTime.now().setZone(GATEWAY_ZONE)
    // Earlier today, never before today's midnight however early the test runs.
    const today = (minutesAgo: number) =>
      DateTime.max(now.minus({ minutes: minutesAgo }), now.startOf('day'))
    const who = await createDepositMerchant()
    const qr = await createDepositAccount({
      channel: 'qr',
      hourlyCountLimit: 40,
      dailyAmountLimit: 5_000_000,
    })
    const transfer = await createDepositAccount({ channel: 'transfer', dailyCountLimit: 500 })
    await createDepositAccount({ channel: 'external' })

    // Today: 4 paid (1,000.00 + 2,500.50 + 750.25 + 12,000.00 = 16,250.75 THB), 1 expired.
    const paidToday = [100_000, 250_050, 75_025, 1_200_000]
    const ids: number[] = []
    for (const [index, amount] of paidToday.entries()) {
      ids.push(
        await insertPayment(who, index % 2 ? transfer.id : qr.id, {
          at: today(5 + index * 7),
          amount,
          outcome: 'paid',
        })
      )
    }
    await insertPayment(who, qr.id, { at: today(3), amount: 30_000, outcome: 'expired' })
    // The 6 days before: a realistic week.
    const week: Array<[number, number, number]> = [
      [18, 3, 1_450_000],
      [22, 2, 1_820_000],
      [15, 4, 980_000],
      [25, 1, 2_310_000],
      [20, 5, 1_760_000],
      [28, 2, 2_640_000],
    ]
    let weekCount = paidToday.length + 1
    let weekPaid = paidToday.reduce((total, amount) => total + amount, 0)
    for (const [back, [paid, expired, volume]] of week.entries()) {
      const day = now
        .minus({ days: 6 - back })
        .startOf('day')
        .plus({ hours: 9 })
      const outcomes: PaymentOutcome[] = [
        ...Array<PaymentOutcome>(paid).fill('paid'),
        ...Array<PaymentOutcome>(expired).fill('expired'),
      ]
      for (const [index, outcome] of outcomes.entries()) {
        const amount = outcome === 'paid' ? Math.floor(volume / paid) : 20_000
        const at = day.plus({ minutes: index * 20 })
        const id = await insertPayment(who, index % 2 ? transfer.id : qr.id, {
          at,
          amount,
          outcome,
        })
        if (outcome === 'paid') {
          weekPaid += amount
          if (index % 2 === 0) {
            await insertLine(transfer.id, {
              lineAt: at.plus({ minutes: 2 + (back % 3) }),
              amount,
              status: 'matched',
              orderId: id,
              matchedAt: at.plus({ minutes: 4 + back }),
            })
          }
        }
        weekCount += 1
      }
    }
    // Today's matches: 6 and 10 minutes after their orders (mean 8 min); in
    // the first minutes of a Bangkok day a match cannot be later than now.
    const matchSeconds: number[] = []
    for (const [index, minutes] of [6, 10].entries()) {
      const orderAt = today(40 + index)
      const matchedAt = DateTime.min(orderAt.plus({ minutes }), now)
      const order = await insertPayment(who, transfer.id, {
        at: orderAt,
        amount: 40_000 + index,
        outcome: 'paid',
      })
      ids.push(order)
      await insertLine(transfer.id, {
        lineAt: DateTime.min(orderAt.plus({ minutes: minutes - 1 }), now),
        amount: 40_000 + index,
        status: 'matched',
        orderId: order,
        matchedAt,
      })
      matchSeconds.push(Math.floor(matchedAt.diff(orderAt, 'seconds').seconds))
    }
    weekCount += 2
    weekPaid += 80_001
    // Eight days ago: outside the window.
    await insertPayment(who, qr.id, {
      at: now.minus({ days: 8 }),
      amount: 9_900_000,
      outcome: 'paid',
    })

    const payer = await createPayoutMerchant()
    for (const [index, status] of (['success', 'success', 'failed'] as const).entries()) {
      await insertPayout(payer, { at: today(10 + index), amount: 500_000, status })
    }
    for (let back = 1; back <= 6; back++) {
      await insertPayout(payer, {
        at: now.minus({ days: back }).startOf('day').plus({ hours: 14 }),
        amount: 300_000 * back,
        status: 'success',
      })
    }
    await insertCallback(who, { at: today(8), state: 'delivered', attempts: [200] })
    await insertCallback(who, { at: today(9), state: 'delivered', attempts: [500, 200] })
    await insertCallback(who, { at: now.minus({ days: 2 }), state: 'failed', attempts: [500, 500] })
    await insertPayment(who, qr.id, {
      at: now.minus({ days: 3 }),
      amount: 45_000,
      outcome: 'freeze',
      updatedAt: now.minus({ hours: 26 }),
    })
    const flagged = await insertPayment(who, qr.id, {
      at: now.minus({ hours: 7 }),
      amount: 61_000,
      outcome: 'open',
      awaitingReview: true,
    })
    weekCount += 2
    await insertSlip(who, flagged, { at: now.minus({ hours: 6 }) })
    await insertLine(qr.id, {
      lineAt: now.minus({ hours: 2 }),
      importedAt: now.minus({ minutes: 30 }),
      amount: 77_700,
      status: 'unmatched',
    })
    await insertLine(qr.id, {
      lineAt: now.minus({ hours: 3 }),
      importedAt: now.minus({ hours: 2 }),
      amount: 12_300,
      status: 'late',
    })
    await insertApprovalRequest({ at: now.minus({ minutes: 20 }), status: 'pending' })
    // Two payments credited before their bank line: one for 26 h (past the 24 h window), one for 2 h.
    await insertReceivable(who, qr.id, ids[0], { at: now.minus({ hours: 26 }), amount: 100_000 })
    await insertReceivable(who, transfer.id, ids[1], {
      at: now.minus({ hours: 2 }),
      amount: 250_050,
    })

    const { page, context } = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(context)
    const blocked: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(message.text())
    })
    await page.goto(adminUrl(''))
    assert.equal(await page.locator('h1').innerText(), 'Dashboard')

    const text = async (selector: string) => (await page.locator(selector).innerText()).trim()
    // Today: 4 + 2 paid (17,050.76 THB) and 1 expired (the open flagged order was created 7 h ago, maybe yesterday).
    const flaggedToday = now.minus({ hours: 7 }) >= now.startOf('day')
    assert.equal(await text('#deposits-today-count'), String(7 + (flaggedToday ? 1 : 0)))
    assert.equal(await text('#deposits-today-volume'), '17,050.76')
    assert.equal(await text('#deposits-today-success'), '85.7 %')
    assert.equal(await text('#deposits-today-expiry'), '14.3 %')
    assert.equal(await text('#deposits-week-count'), String(weekCount))
    const weekBaht = `${Math.trunc(weekPaid / 100).toLocaleString('en-US')}.${String(weekPaid % 100).padStart(2, '0')}`
    assert.equal(await text('#deposits-week-volume'), weekBaht)
    assert.equal(await text('#payouts-today-count'), '3')
    assert.equal(await text('#payouts-today-volume'), '10,000.00')
    assert.equal(await text('#payouts-week-volume'), '73,000.00')
    assert.equal(
      await text('#match-today'),
      formatSeconds(Math.round((matchSeconds[0] + matchSeconds[1]) / 2))
    )
    assert.equal(await text('#callbacks-today-rate'), '33.3 %')
    assert.equal(await text('#callbacks-given-up'), '1')
    assert.equal(await text('#review-total'), '5')
    assert.equal(await text('#receivables-open'), '2')
    assert.equal(await text('#receivables-amount'), '3,500.50')
    assert.equal(await text('#receivables-oldest'), '1 d 2 h')
    assert.equal(await text('#receivables-stale'), '1')

    // The same figures in the table (readable without JavaScript).
    const todayRow = page.locator(`#day-${now.toFormat('yyyy-LL-dd')}`)
    const cells = await todayRow.locator('td').allInnerTexts()
    assert.deepEqual(cells.slice(1, 5), ['6', '17,050.76', '85.7 %', '14.3 %'])
    assert.equal(await page.locator('#daily-figures tbody tr').count(), 7)
    assert.deepEqual(await page.locator('#review-frozen td').allInnerTexts(), [
      '0',
      '0',
      '0',
      '1',
      '1',
    ])
    assert.deepEqual(await page.locator('#review-lines td').allInnerTexts(), [
      '1',
      '1',
      '0',
      '0',
      '2',
    ])
    assert.include(await text(`#usage-${qr.id}`), '/ 40')
    assert.equal(await page.locator('#queues-table tbody tr').count(), 5)

    // Charts: Chart.js loaded from the gateway, one instance per canvas, drawn.
    await page.waitForFunction('window.Chart && Object.keys(window.Chart.instances).length === 4')
    for (const id of ['chart-deposits', 'chart-volume', 'chart-matching', 'chart-review']) {
      // Run in the page (a string: the test's TypeScript has no DOM types).
      const drawn: { width: number; height: number; chart: boolean; painted: number } =
        await page.evaluate(`(() => {
          const canvas = document.getElementById('${id}')
          const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data
          let painted = 0
          for (let index = 3; index < pixels.length; index += 4) if (pixels[index] > 0) painted += 1
          return { width: canvas.width, height: canvas.height, chart: Boolean(window.Chart.getChart('${id}')), painted }
        })()`)
      assert.isAbove(drawn.width, 300, id)
      assert.isAbove(drawn.height, 150, id)
      assert.isTrue(drawn.chart, id)
      assert.isAbove(drawn.painted, 1000, id)
    }
    assert.deepEqual(blocked, [], 'no script or CSP error')

    const library = await page.request.get(adminUrl('/assets/js/chart.umd.min.js?v=4.6.1'))
    assert.equal(library.status(), 200)
    assert.include(library.headers()['cache-control'], 'max-age=31536000')
    assert.equal((await page.request.get(adminUrl('/assets/js/package.json'))).status(), 404)

    await screenshot(page, 'dashboard')
  })

  test('filtered by platform and by merchant, kept in the URL, for every role', async ({
    assert,
  }) => {
    const now = DateTime.now().setZone(GATEWAY_ZONE)
    const today = (minutesAgo: number) =>
      DateTime.max(now.minus({ minutes: minutesAgo }), now.startOf('day'))
    // Platform "Main": Lotus Shop and Noodle Bar; platform "Games": Siam Games.
    const lotus = await createDepositMerchant()
    const noodles = await createDepositMerchant()
    const games = await createTestMerchant('games')
    games.merchant.merge({ depositGroup: 'test-group' })
    await games.merchant.save()
    await db.from('platforms').where('code', 'test').update({ name: 'Main' })
    await db.from('platforms').where('code', 'games').update({ name: 'Games' })
    for (const [who, name] of [
      [lotus, 'Lotus Shop'],
      [noodles, 'Noodle Bar'],
      [games, 'Siam Games'],
    ] as const) {
      await db.from('merchants').where('id', who.merchant.id).update({ name })
    }
    const mainId = String(lotus.merchant.platformId)
    const gamesId = String(games.merchant.platformId)
    /** Resolves once the page shows the view for `platform` (and `merchant`). */
    const landedOn = (page: Page, platform: string, merchant = '') =>
      page.waitForURL(
        (url) =>
          url.searchParams.get('platform') === platform &&
          (url.searchParams.get('merchant') ?? '') === merchant,
        { waitUntil: 'load' }
      )
    const account = await createDepositAccount({ channel: 'transfer' })
    // Today: Lotus 1 paid (1,000.00), Noodle Bar 2 paid (2,000.00 + 3,000.50),
    // Siam Games 3 paid (10,000.00 each) and 1 expired; payouts: Siam Games 1 sent.
    const paid = [
      [lotus, 100_000],
      [noodles, 200_000],
      [noodles, 300_050],
      [games, 1_000_000],
      [games, 1_000_000],
      [games, 1_000_000],
    ] as const
    for (const [index, [who, amount]] of paid.entries()) {
      await insertPayment(who, account.id, { at: today(5 + index), amount, outcome: 'paid' })
    }
    await insertPayment(games, account.id, { at: today(3), amount: 5_000, outcome: 'expired' })
    await insertPayout(games, { at: today(4), amount: 250_000, status: 'success' })

    for (const role of ['admin', 'operator', 'viewer'] as const) {
      const { page, context } = await signedInAs(`${role}-filters@example.com`, role)
      contexts.push(context)
      const text = async (selector: string) => (await page.locator(selector).innerText()).trim()
      const options = async (selector: string) =>
        (await page.locator(`${selector} option`).allInnerTexts()).map((item) => item.trim())
      await page.goto(adminUrl(''))
      assert.equal(await text('#deposits-today-count'), '7', role)
      assert.equal(await text('#deposits-today-volume'), '36,000.50', role)
      assert.deepEqual(await options('#filter-platform'), ['All platforms', 'Games', 'Main'])
      assert.deepEqual(await options('#filter-merchant'), [
        'All merchants',
        'Lotus Shop (Main)',
        'Noodle Bar (Main)',
        'Siam Games (Games)',
      ])

      // Choosing a platform reloads the page for it (GET, in the URL).
      await Promise.all([
        landedOn(page, gamesId),
        page.selectOption('#filter-platform', { label: 'Games' }),
      ])
      assert.equal(await text('#deposits-today-count'), '4', `${role}: Games`)
      assert.equal(await text('#deposits-today-volume'), '30,000.00', `${role}: Games`)
      assert.equal(await text('#deposits-today-success'), '75.0 %', `${role}: Games`)
      assert.equal(await text('#payouts-today-volume'), '2,500.00', `${role}: Games`)
      assert.deepEqual(await options('#filter-merchant'), ['All merchants', 'Siam Games'])
      assert.include(await text('.dash-head p'), 'for Games')
      if (role === 'admin') await screenshot(page, 'dashboard-filtered-platform')

      // Platform Main, then one of its merchants: the figures follow, both filters in the URL.
      await Promise.all([
        landedOn(page, mainId),
        page.selectOption('#filter-platform', { label: 'Main' }),
      ])
      assert.equal(await text('#deposits-today-count'), '3', `${role}: Main`)
      assert.equal(await text('#deposits-today-volume'), '6,000.50', `${role}: Main`)
      assert.equal(await text('#payouts-today-volume'), '0.00', `${role}: Main`)
      assert.deepEqual(await options('#filter-merchant'), [
        'All merchants',
        'Lotus Shop',
        'Noodle Bar',
      ])
      await page.selectOption('#filter-merchant', { label: 'Noodle Bar' })
      await Promise.all([
        landedOn(page, mainId, String(noodles.merchant.id)),
        page.click('#dashboard-filter-apply'),
      ])
      const url = new URL(page.url())
      assert.equal(url.searchParams.get('merchant'), String(noodles.merchant.id))
      assert.isNotNull(url.searchParams.get('platform'))
      assert.equal(await text('#deposits-today-count'), '2', `${role}: Noodle Bar`)
      assert.equal(await text('#deposits-today-volume'), '5,000.50', `${role}: Noodle Bar`)
      assert.include(await text('.dash-head p'), 'for Noodle Bar')
      if (role === 'admin') await screenshot(page, 'dashboard-filtered-merchant')

      // The URL alone gives the same view (a reload, a shared link).
      await page.goto(page.url())
      assert.equal(await text('#deposits-today-count'), '2', `${role}: reload`)
      assert.equal(await page.locator('#filter-merchant').inputValue(), String(noodles.merchant.id))

      // Back to everything.
      await page.click('#dashboard-filter-clear')
      await page.waitForURL(adminUrl(''))
      assert.equal(await text('#deposits-today-count'), '7', `${role}: all`)
      await context.close()
    }
  })
})
