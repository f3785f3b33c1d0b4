import { test } from '@japa/runner'
import { readdir, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import PaymentOrder from '#payments/models/payment_order'
import { formatAmount } from '#core/money'
import { fetchStatements } from '#reconciliation/fetch/fetch_statements'
import { saveStatementSource } from '#reconciliation/fetch/save_statement_source'
import { closeBrowser } from '#tests/helpers/browser'
import { SETUP_ACTOR, adminUrl, csrfToken, signedInAs } from '#tests/helpers/admin'
import { closedPort } from '#tests/helpers/ports'
import { sftpUnavailable, startSftpServer, type SftpServer } from '#tests/helpers/sftp_server'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
} from '#tests/helpers/merchants'

const SFTP_MISSING = sftpUnavailable()

async function submit(page: Page, formSelector: string) {
  await Promise.all([page.waitForNavigation(), page.click(`${formSelector} button[type=submit]`)])
}

async function screenshot(page: Page, name: string) {
  if (!process.env.SCREENSHOTS) return
  await page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: true })
}

/**
 * What the pages show: an SFTP source of a real sshd whose file was fetched
 * and paid a payment, and an IMAP source whose server does not answer.
 */
async function sourcesWithHistory(server: SftpServer) {
  const who = await createDepositMerchant()
  const account = await createDepositAccount({ accountNo: '1234567890' })
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `SRC${Date.now()}`,
      amount: '1250.00',
      bank: 'SCB',
      account_name: 'Customer',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PaymentOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  const { id: sftpId } = await saveStatementSource(
    {
      deposit_account_id: account.id,
      kind: 'sftp',
      name: 'KBank H2H',
      host: server.host,
      port: server.port,
      username: server.username,
      secret: server.privateKey,
      host_key_fingerprint: server.hostKeyFingerprint,
      remote_dir: server.dropDir,
      file_pattern: '*.csv',
      every_minutes: 10,
      statement_due_by: '09:00',
    },
    SETUP_ACTOR
  )
  const at = DateTime.now().setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm')
  await server.drop(
    'KBANK_STMT_20261121.csv',
    `date_time,direction,amount,reference,description\n${at},credit,"${formatAmount(order.transferAmount)}",,PROMPTPAY ${order.platformOrderId}\n`
  )
  const fetched = await fetchStatements(sftpId!, { force: true })
  if (fetched.status !== 'ok') throw new Error(fetched.error ?? fetched.status)

  const { id: imapId } = await saveStatementSource(
    {
      deposit_account_id: account.id,
      kind: 'imap',
      name: 'KBank mail',
      host: '127.0.0.1',
      port: await closedPort(),
      username: 'finance@merchant.example',
      secret: 'mailbox password',
      imap_tls: 'implicit',
      sender: 'k-electronic-document@kasikornbank.example',
      every_minutes: 30,
    },
    SETUP_ACTOR
  )
  await fetchStatements(imapId!, { force: true })
  return { account, order, sftpId: sftpId!, imapId: imapId! }
}

test.group('back-office statement sources (browser)', (group) => {
  let server: SftpServer
  const contexts: BrowserContext[] = []
  group.tap((t) => t.skip(Boolean(SFTP_MISSING), SFTP_MISSING ?? undefined))
  group.setup(async () => {
    if (!SFTP_MISSING) server = await startSftpServer()
  })
  group.teardown(async () => {
    await server?.stop()
    await closeBrowser()
  })
  group.each.setup(async () => {
    await resetDatabase()
    for (const name of await readdir(server.dropDir)) await unlink(join(server.dropDir, name))
  })
  group.each.teardown(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()))
  })
  group.each.timeout(120_000)

  test('admin: the sources with their last fetch and error, the form (errors by field, the secret never kept), a new source waiting for a second admin, the fetched files', async ({
    assert,
  }) => {
    const { account, sftpId, imapId } = await sourcesWithHistory(server)
    const admin = await signedInAs('admin@example.com', 'admin')
    contexts.push(admin.context)
    const { page } = admin

    await page.goto(adminUrl('/statement-sources'))
    // Under Statements in the menu, with the section's tabs.
    assert.equal(await page.locator('header.top nav a.active').innerText(), 'Statements')
    assert.include(
      await page.locator('nav[aria-label="Statements"] a.active').innerText(),
      'Sources'
    )
    const sftpRow = page.locator(`#source-${sftpId}`)
    assert.include(await sftpRow.innerText(), 'KBank H2H')
    assert.equal(await sftpRow.locator('.source-state').innerText(), 'ok')
    const imapRow = page.locator(`#source-${imapId}`)
    assert.equal(await imapRow.locator('.source-state').innerText(), 'failing (1)')
    assert.include(await imapRow.locator('.source-error').innerText(), 'IMAP connection')
    assert.include(await page.locator('#recent-files').innerText(), 'KBANK_STMT_20261121.csv')
    await screenshot(page, 'statement-sources-list')

    // A new source: errors beside their fields, what was typed kept, never the key.
    await page.click('#new-source')
    await page.selectOption('#field-deposit_account_id', String(account.id))
    await page.selectOption('#field-kind', 'sftp')
    await page.fill('#field-name', 'SCB H2H')
    await page.fill('#field-host', 'sftp.scb.example')
    await page.fill('#field-username', 'merchant01')
    await page.fill('#field-secret', 'not a key')
    await page.fill('#field-host_key_fingerprint', 'AA:BB')
    await page.fill('#field-remote_dir', '/outbound')
    await submit(page, '#source-new-form')
    assert.include(await page.locator('#error-host_key_fingerprint').innerText(), 'SHA256')
    assert.include(await page.locator('#error-secret').innerText(), 'not an SSH private key')
    assert.equal(await page.inputValue('#field-name'), 'SCB H2H')
    assert.equal(await page.inputValue('#field-secret'), '')
    await screenshot(page, 'statement-sources-form')

    await page.fill('#field-secret', server.privateKey)
    await page.fill('#field-host_key_fingerprint', server.hostKeyFingerprint)
    await submit(page, '#source-new-form')
    assert.include(await page.locator('.flash.success').innerText(), 'waits for a second admin')
    const pending = page.locator('#sources-pending')
    assert.include(await pending.innerText(), 'SCB H2H')
    assert.notInclude(await page.content(), 'PRIVATE KEY')
    assert.lengthOf(await db.from('statement_sources').where('name', 'SCB H2H'), 0)

    // One source: what it reads, our public key for the bank, its files; Fetch now.
    await page.goto(adminUrl(`/statement-sources/${sftpId}`))
    assert.include(await page.locator('#pinned-key').innerText(), server.hostKeyFingerprint)
    assert.match(await page.locator('#public-key').innerText(), /^ssh-ed25519 AAAA/)
    assert.notInclude(await page.content(), 'PRIVATE KEY')
    assert.include(await page.locator('#source-files').innerText(), server.dropDir)
    await screenshot(page, 'statement-source')
    await submit(page, '#fetch-now-form')
    assert.include(await page.locator('.flash.success').innerText(), 'queued')

    // Every fetched file, where it came from, and its import.
    await page.goto(adminUrl('/statement-sources/files'))
    const row = page.locator('.fetched-files-table tbody tr').first()
    assert.include(await row.innerText(), `${server.dropDir}/KBANK_STMT_20261121.csv`)
    await screenshot(page, 'statement-sources-files')
    await Promise.all([page.waitForNavigation(), row.locator('.import-link').click()])
    assert.include(await page.locator('#import-origin').innerText(), 'fetched by SFTP')
    assert.include(
      await page.locator('#import-origin-detail').innerText(),
      'KBANK_STMT_20261121.csv'
    )
  })

  test('viewer: reads the sources and the files; no form, no Fetch now, and a forged POST is refused', async ({
    assert,
  }) => {
    const { sftpId } = await sourcesWithHistory(server)
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    const { page } = viewer

    await page.goto(adminUrl('/statement-sources'))
    assert.equal(await page.locator('#new-source').count(), 0)
    assert.include(await page.locator(`#source-${sftpId}`).innerText(), 'KBank H2H')
    await screenshot(page, 'statement-sources-viewer')
    await page.goto(adminUrl(`/statement-sources/${sftpId}`))
    assert.equal(await page.locator('#fetch-now').count(), 0)
    assert.equal(await page.locator('#source-edit-form').count(), 0)
    assert.equal(await page.locator('#switch-source').count(), 0)
    assert.include(await page.locator('#source-files').innerText(), 'KBANK_STMT_20261121.csv')
    await page.goto(adminUrl('/statement-sources/files'))
    assert.include(
      await page.locator('.fetched-files-table').innerText(),
      'KBANK_STMT_20261121.csv'
    )
    await screenshot(page, 'statement-sources-files-viewer')
    // The kept copy, byte for byte as the bank's server gave it.
    const href = await page.locator('.fetched-files-table a.file-name').first().getAttribute('href')
    const kept = await page.request.get(new URL(href!, page.url()).toString())
    assert.equal(kept.status(), 200)
    assert.include(kept.headers()['content-disposition'], 'KBANK_STMT_20261121.csv')
    assert.equal(
      (await kept.body()).toString(),
      await readFile(join(server.dropDir, 'KBANK_STMT_20261121.csv'), 'utf8')
    )

    const csrf = (await csrfToken(page))!
    for (const [path, form] of [
      [`/statement-sources/${sftpId}/fetch`, {}],
      [`/statement-sources/${sftpId}`, { host: 'evil.example' }],
      [`/statement-sources/${sftpId}/enabled`, { enabled: 'off' }],
    ] as const) {
      const response = await page.request.post(adminUrl(path), {
        form: { _csrf: csrf, ...form },
        maxRedirects: 0,
      })
      assert.equal(response.status(), 403, path)
    }
    assert.equal((await db.from('statement_sources').where('id', sftpId).first()).enabled, 1)
  })
})
