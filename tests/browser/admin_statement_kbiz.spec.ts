import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext } from 'playwright-core'
import { GATEWAY_ZONE } from '#core/clock'
import { formatThb } from '#core/money'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import { createPayment } from '#tests/helpers/decisions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

/** A 13-column KBiz row, cells by column number (1-based), quoted where needed. */
function csvRow(cells: Record<number, string>) {
  return Array.from({ length: 13 }, (_, index) => {
    const value = cells[index + 1] ?? ''
    return /[",]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
  }).join(',')
}

/**
 * The statement upload with its default layout choice, "recognise from the
 * file": a KBiz export (one deposit paying an open order) is read as kbiz.
 */
test.group('back-office statement upload: a KBiz export recognised (browser)', (group) => {
  const contexts: BrowserContext[] = []
  let directory: string
  group.each.setup(async () => {
    await resetDatabase()
    directory = await mkdtemp(join(tmpdir(), 'gw-admin-kbiz-'))
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
      await rm(directory, { recursive: true, force: true })
    }
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  test('uploaded with "recognise from the file", the KBiz file is imported as kbiz and pays its order', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const order = await createPayment(who, '1500.00')
    const local = DateTime.utc().setZone(GATEWAY_ZONE)
    const ending = 5_000_00 + order.transferAmount
    const content = [
      csvRow({ 1: '\uFEFFรายการเดินบัญชีเงินฝากกระแสรายวัน (มีรายละเอียด)' }),
      csvRow({}),
      csvRow({}),
      csvRow({}),
      csvRow({}),
      csvRow({
        12: `${local.minus({ days: 1 }).toFormat('dd/LL/yyyy')} - ${local.toFormat('dd/LL/yyyy')}`,
      }),
      csvRow({}),
      csvRow({ 13: formatThb(ending) }),
      csvRow({ 10: '0', 13: '0.00' }),
      csvRow({ 10: '1', 13: formatThb(order.transferAmount) }),
      csvRow({ 2: 'วันที่', 4: 'รายการ', 5: 'ถอนเงิน', 7: 'ฝากเงิน', 9: 'ยอดคงเหลือ' }),
      csvRow({ 2: 'Date', 4: 'Description', 5: 'Withdrawal', 7: 'Deposit', 9: 'Balance' }),
      csvRow({
        2: local.toFormat('dd/LL/yy'),
        3: local.toFormat('HH:mm'),
        4: 'รับโอนเงิน',
        7: formatThb(order.transferAmount),
        9: formatThb(ending),
        13: `K PLUS, From X7890 ${order.platformOrderId}`,
      }),
    ].join('\r\n')
    const path = join(directory, 'kbiz-current.csv')
    await writeFile(path, content)

    const session = await signedInAs('operator@example.com', 'operator')
    contexts.push(session.context)
    const page = session.page
    await page.goto(adminUrl('/statements'))
    assert.equal(await page.inputValue('#field-layout'), '')
    assert.equal(
      await page.locator('#field-layout option:checked').innerText(),
      'recognise from the file'
    )
    await page.selectOption('#field-deposit_account_id', String(account.id))
    await page.setInputFiles('#field-file', path)
    await screenshot(page, 'statements-upload-kbiz')
    await Promise.all([
      page.waitForNavigation(),
      page.click('#statement-upload button[type=submit]'),
    ])
    assert.include(
      await page.locator('.flash.success').innerText(),
      'kbiz-current.csv: 1 lines, 1 new: 1 matched, 0 late, 0 unmatched'
    )
    const [imported] = await db.from('statement_imports')
    assert.equal(imported.layout, 'kbiz')
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    await screenshot(page, 'statement-import-kbiz')
  })
})
