import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import type { Redis } from 'ioredis'
import { RedisConnections } from '#core/redis'
import { authFailureCounters } from '#merchant_api/auth_failure_blocks'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import { startSecondGateway } from '#tests/helpers/second_process'
import {
  authBody,
  createTestMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'

/**
 * The merchant API blocks page in headless Chromium: addresses and
 * merchant_ids blocked after failed authentications (made by a real gateway
 * process with low limits), and those still counting; every role reads it,
 * operators and admins lift a block (audited), a viewer's POST is refused on
 * the server.
 */

async function redis(): Promise<Redis> {
  return (await app.container.make(RedisConnections)).main
}

/** Deletes every failed-authentication counter (SCAN, never KEYS). */
async function clearCounters() {
  const connection = await redis()
  let cursor = '0'
  do {
    const [next, keys] = await connection.scan(
      cursor,
      'MATCH',
      'gw:rl:auth-failures:*',
      'COUNT',
      1000
    )
    cursor = next
    if (keys.length > 0) await connection.del(...keys)
  } while (cursor !== '0')
}

/**
 * Through a gateway process with limits of 3 per minute: 127.0.0.8 guesses
 * merchant_ids that do not exist (5 failures: blocked), and `who`'s
 * integration signs with a wrong secret from four servers (blocked
 * merchant_id; each server's address is still counting).
 */
async function makeBlocks(who: TestMerchant) {
  const gateway = await startSecondGateway({
    env: { API_AUTH_FAILURES_PER_IP: '3', API_AUTH_FAILURES_PER_MERCHANT: '3' },
  })
  try {
    const made = { ...who, merchantId: 'M999999996', token: 'guess' }
    for (let i = 0; i < 5; i++) {
      await signedPost('/balance', made, authBody(made), {
        baseUrl: gateway.url,
        localAddress: '127.0.0.8',
      })
    }
    for (let i = 1; i <= 4; i++) {
      await signedPost('/balance', who, authBody(who), {
        baseUrl: gateway.url,
        localAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': `192.0.2.${i}` },
        secret: 'not-the-secret',
      })
    }
  } finally {
    await gateway.stop()
  }
}

/** The page's rows as "kind subject failures state". */
async function rows(page: Page) {
  return page
    .locator('#api-blocks-table tbody tr[data-subject]')
    .evaluateAll((trs) =>
      trs.map((tr) =>
        [
          tr.getAttribute('data-kind'),
          tr.getAttribute('data-subject'),
          tr.querySelector('.failures')?.textContent?.trim(),
          tr.querySelector('.state')?.textContent?.trim(),
        ].join(' ')
      )
    )
}

test.group('back-office API blocks (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(async () => {
    await resetDatabase()
    await clearCounters()
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
    }
  })
  group.teardown(async () => closeBrowser())
  group.each.timeout(120_000)

  test('each role reads the blocks; operators and admins lift one (audited); a viewer cannot', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    await makeBlocks(who)
    const expected = [
      'address 127.0.0.8 5 blocked',
      `merchant_id ${who.merchantId} 4 blocked`,
      'address 192.0.2.1 1 counting',
      'address 192.0.2.2 1 counting',
      'address 192.0.2.3 1 counting',
      'address 192.0.2.4 1 counting',
    ]

    // A viewer reads, sees no form, and its hand-made POST is refused by the server.
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    await viewer.page.goto(adminUrl('/api-blocks'))
    assert.equal(await viewer.page.locator('h1').innerText(), 'API blocks')
    assert.deepEqual(await rows(viewer.page), expected)
    assert.equal(await viewer.page.locator('form.clear-block').count(), 0)
    assert.include(
      await viewer.page.locator('main').innerText(),
      'Operators and admins can lift a block'
    )
    const refused = await viewer.page.request.post(adminUrl('/api-blocks/clear'), {
      form: { _csrf: (await csrfToken(viewer.page))!, subject: '127.0.0.8' },
      maxRedirects: 0,
    })
    assert.equal(refused.status(), 403)
    assert.lengthOf((await authFailureCounters(await redis())).counters, 6)

    // An operator lifts the address's block with a reason.
    const operator = await signedInAs('ops@example.com', 'operator')
    contexts.push(operator.context)
    const page = operator.page
    await page.goto(adminUrl('/api-blocks'))
    assert.deepEqual(await rows(page), expected)
    assert.equal(await page.locator('header.top nav a.active').innerText(), 'API blocks')
    // A form per block; what is still under its limit has nothing to lift.
    assert.equal(await page.locator('form.clear-block').count(), 2)
    await screenshot(page, 'api-blocks')
    const addressRow = page.locator('tr[data-subject="127.0.0.8"]')
    await addressRow.locator('input[name=comment]').fill('test client fixed')
    await Promise.all([page.waitForNavigation(), addressRow.locator('button').click()])
    assert.include(
      await page.locator('.flash.success').innerText(),
      'Block of address 127.0.0.8 lifted'
    )
    assert.deepEqual(await rows(page), expected.slice(1))

    // Clearing what is not counted (any more) is refused with a message.
    const stale = await page.request.post(adminUrl('/api-blocks/clear'), {
      form: { _csrf: (await csrfToken(page))!, subject: '127.0.0.8' },
      headers: { referer: adminUrl('/api-blocks') },
    })
    assert.equal(stale.status(), 200)
    assert.include(await stale.text(), 'No failed authentication is counted for address 127.0.0.8')

    // An admin lifts the merchant_id's block; the menu still fits on one line.
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    await admin.page.goto(adminUrl('/api-blocks'))
    const tops = await admin.page
      .locator('header.top nav a')
      .evaluateAll((links) => links.map((link) => (link as any).offsetTop))
    assert.lengthOf(new Set(tops), 1, 'the menu wraps')
    const merchantRow = admin.page.locator(`tr[data-subject="${who.merchantId}"]`)
    assert.equal(
      await merchantRow.locator('a').getAttribute('href'),
      `/admin/merchants/${who.merchantId}`
    )
    await Promise.all([admin.page.waitForNavigation(), merchantRow.locator('button').click()])
    assert.include(
      await admin.page.locator('.flash.success').innerText(),
      `Block of merchant_id ${who.merchantId} lifted`
    )
    assert.deepEqual(await rows(admin.page), expected.slice(2))
    const left = (await authFailureCounters(await redis())).counters
    assert.isTrue(left.every((counter) => counter.kind === 'ip' && !counter.blocked))

    const audit = await db
      .from('audit_logs')
      .where('action', 'api_block.clear')
      .orderBy('id')
      .select('actor', 'subject_type', 'subject_id', 'comment', 'ip')
    assert.deepEqual(
      audit.map((row) => [row.actor, row.subject_type, row.subject_id, row.comment]),
      [
        ['operator:ops@example.com', 'ip_address', '127.0.0.8', 'test client fixed'],
        ['operator:admin@example.com', 'merchant', who.merchantId, null],
      ]
    )
  })
})
