import { test } from '@japa/runner'
import type { BrowserContext } from 'playwright-core'
import Operator from '#operators/models/operator'
import { cliActor } from '#core/actor'
import { createDepositAccount as askForDepositAccount } from '#payments/actions/create_deposit_account'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

/**
 * What a second admin sees of a change of where money goes: the notice on
 * the dashboard and in the top bar, the request card with the values now and
 * the ones asked; an operator sees no notice at all.
 */
test.group('back-office notices and request cards (browser)', (group) => {
  const contexts: BrowserContext[] = []
  group.each.setup(async () => {
    await resetDatabase()
    await createDepositMerchant()
  })
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('a second admin sees who asked what on the dashboard, compares before and after on the card, and acknowledges', async ({
    assert,
  }) => {
    const bob = await signedInAs('bob@example.com', 'admin')
    const olga = await signedInAs('olga@example.com', 'operator')
    contexts.push(bob.context, olga.context)
    const alice = await signedInAs('alice@example.com', 'admin')
    contexts.push(alice.context)
    const aliceId = (await Operator.findByOrFail('email', 'alice@example.com')).id
    const actor = { name: 'operator:alice@example.com', operatorId: aliceId }

    // Alice asks for a new transfer account and for another account's number to change.
    const existing = await createDepositAccount({ channel: 'transfer', promptpayId: null })
    const created = await askForDepositAccount(
      {
        channel: 'transfer',
        deposit_group: 'test-group',
        bank: 'SCB',
        account_no: '4445556667',
        account_name: 'Alice Holdings',
        priority: 1000,
        comment: 'new collection account',
      },
      actor
    )
    assert.isNotNull(created.request)
    const edited = await updateDepositAccount(
      { id: existing.id, account_no: '9998887776', comment: 'bank changed the number' },
      actor
    )
    // And someone on a server adds one directly: a break-glass use.
    await askForDepositAccount(
      {
        channel: 'transfer',
        deposit_group: 'test-group',
        bank: 'KTB',
        account_no: '1212121212',
        account_name: 'Night shift',
        comment: 'bank outage workaround',
      },
      cliActor()
    )

    const page = bob.page
    await page.goto(adminUrl('/'))
    assert.equal(await page.locator('#notice-count').innerText(), '3')
    const notices = await page.locator('#dashboard-notices .notice-row').allInnerTexts()
    assert.lengthOf(notices, 3)
    assert.match(notices[0], /break-glass/)
    assert.match(notices.join('\n'), /alice@example\.com asks to/)
    await screenshot(page, 'notices-dashboard')

    // The card: the account number now and the one asked.
    await page.goto(adminUrl('/review/approvals'))
    const requestId = (edited as { request: { id: number } }).request.id
    const card = page.locator(`#approval-change-${requestId}`)
    assert.include(await card.innerText(), '9998887776')
    assert.include(await card.locator('tr.changed').first().innerText(), 'account_no')
    await screenshot(page, 'approval-request-cards')

    // Acknowledging one takes it off Bob's dashboard only. Alice is not told of her own requests.
    await page.goto(adminUrl('/'))
    const firstId = await page.locator('#dashboard-notices .notice-row').first().getAttribute('id')
    await Promise.all([page.waitForNavigation(), page.click(`#ack-${firstId}`)])
    assert.equal(await page.locator('#notice-count').innerText(), '2')
    await alice.page.goto(adminUrl('/'))
    assert.equal(await alice.page.locator('#notice-count').innerText(), '1')

    // An operator has no notices area.
    await olga.page.goto(adminUrl('/'))
    assert.equal(await olga.page.locator('#notices-link').count(), 0)
    assert.equal(await olga.page.locator('#dashboard-notices').count(), 0)
    const forbidden = await olga.page.goto(adminUrl('/notifications'))
    assert.equal(forbidden?.status(), 403)
  })
})
