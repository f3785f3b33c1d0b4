import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import type { BrowserContext, Page } from 'playwright-core'
import ApprovalRequest from '#approvals/models/approval_request'
import { GATEWAY_ZONE } from '#core/clock'
import { closeBrowser, screenshot } from '#tests/helpers/browser'
import { resetDatabase } from '#tests/helpers/merchants'
import { adminUrl, signedInAs } from '#tests/helpers/admin'

const THAI_MONTHS = [
  'ม.ค.',
  'ก.พ.',
  'มี.ค.',
  'เม.ย.',
  'พ.ค.',
  'มิ.ย.',
  'ก.ค.',
  'ส.ค.',
  'ก.ย.',
  'ต.ค.',
  'พ.ย.',
  'ธ.ค.',
]

/** A Buddhist-era Thai-month export: two lines, a footer of totals; `badDate` breaks line 5's date. */
function sample(badDate = false) {
  const at = DateTime.utc().minus({ days: 1 }).setZone(GATEWAY_ZONE).startOf('minute')
  const date = (when: DateTime) =>
    `${when.toFormat('dd')} ${THAI_MONTHS[when.month - 1]} ${String(when.year + 543).slice(2)}`
  const later = at.plus({ minutes: 12 })
  return (
    '\uFEFF' +
    [
      'รายการเคลื่อนไหวบัญชี',
      'ยอดยกมา,"10,000.00"',
      'วันที่,เวลา,รายการ,ถอนเงิน,ฝากเงิน,ยอดคงเหลือ',
      `${date(at)},${at.toFormat('HH:mm')},รับโอนเงิน,,"1,000.00","11,000.00"`,
      `${badDate ? `31 ก.พ. ${String(at.year + 543).slice(2)}` : date(later)},${later.toFormat('HH:mm')},โอนเงิน,250.00,,"10,750.00"`,
      'รวม,,,250.00,"1,000.00",',
    ].join('\r\n') +
    '\r\n'
  )
}

async function submit(page: Page, selector: string) {
  await Promise.all([page.waitForNavigation(), page.click(selector)])
}

/**
 * An admin defines a bank's layout in the browser, previews a sample (a
 * refused cell named by line and column), saves it; a second admin
 * approves it; a viewer looks.
 */
test.group('back-office statement layouts (browser)', (group) => {
  const contexts: BrowserContext[] = []
  let directory: string
  group.each.setup(async () => {
    await resetDatabase()
    directory = await mkdtemp(join(tmpdir(), 'gw-admin-layouts-'))
    return async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()))
      await rm(directory, { recursive: true, force: true })
    }
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  test('an admin defines a layout, previews a sample with a refused cell, saves; a second admin approves; a viewer looks', async ({
    assert,
  }) => {
    const badPath = join(directory, 'scb-sample-bad.csv')
    const goodPath = join(directory, 'scb-sample.csv')
    await writeFile(badPath, sample(true))
    await writeFile(goodPath, sample())

    const maker = await signedInAs('maker@example.com', 'admin')
    contexts.push(maker.context)
    const page = maker.page
    await page.goto(adminUrl('/statement-layouts'))
    await submit(page, '#new-layout')
    assert.match(page.url(), /\/admin\/statement-layouts\/new$/)

    await page.fill('#field-name', 'scb-business-net')
    await page.selectOption('#field-bank', 'SCB')
    await page.selectOption('#field-encoding', 'utf8-bom')
    await page.fill('#field-skip_rows', '2')
    await page.fill('#field-stop_at', 'รวม')
    await page.fill('#field-date_column', 'วันที่')
    await page.fill('#field-time_column', 'เวลา')
    await page.fill('#field-description_column', 'รายการ')
    await page.fill('#field-balance_column', 'ยอดคงเหลือ')
    await page.selectOption('#field-amount_mode', 'split')
    await page.fill('#field-withdrawal_column', 'ถอนเงิน')
    await page.fill('#field-deposit_column', 'ฝากเงิน')
    await page.fill('#field-date_format', 'DD TMMM YY')
    await page.selectOption('#field-era', 'be')
    await page.fill('#field-opening_balance_cell', '2:2')
    await page.fill('#field-withdrawals_total_cell', '+1:D')
    await page.fill('#field-deposits_total_cell', '+1:E')

    // The sample with a bad date: the preview names the cell; the form keeps what was typed.
    await page.setInputFiles('#field-sample', badPath)
    await submit(page, '#preview-button')
    assert.equal(await page.inputValue('#field-name'), 'scb-business-net')
    assert.equal(await page.inputValue('#field-date_format'), 'DD TMMM YY')
    assert.equal(await page.inputValue('#field-era'), 'be')
    const problems = await page.locator('#preview-problems tbody tr').allInnerTexts()
    assert.lengthOf(problems, 1)
    assert.include(problems[0], '5')
    assert.include(problems[0], 'column 1 "วันที่" (A)')
    assert.include(problems[0], 'is not a date and time that exists')
    assert.include(await page.locator('#preview-verdict').innerText(), 'would be refused')
    assert.include(await page.locator('#preview-line-4').innerText(), '1,000.00')
    assert.include(await page.locator('#preview-line-4').innerText(), 'credit')
    await screenshot(page, 'statement-layouts-editor-preview')

    // A field error stays beside its field.
    await page.fill('#field-date_format', 'MM/YY')
    await page.setInputFiles('#field-sample', goodPath)
    await submit(page, '#preview-button')
    assert.include(
      await page.locator('#error-date_format').innerText(),
      'date_format needs the day'
    )
    assert.equal(await page.locator('#layout-preview').count(), 0)

    // The good sample: every line as it would be imported, the footer's totals agreeing.
    await page.fill('#field-date_format', 'DD TMMM YY')
    await page.setInputFiles('#field-sample', goodPath)
    await submit(page, '#preview-button')
    assert.include(await page.locator('#preview-verdict').innerText(), 'would import')
    assert.include(await page.locator('#preview-summary').innerText(), '2 lines read, 0 refused')
    assert.deepEqual(
      (await page.locator('#preview-figures tbody tr').allInnerTexts()).map((row) =>
        row.includes('agrees')
      ),
      [true, true, true]
    )
    await screenshot(page, 'statement-layouts-editor-preview-ok')

    // Saved: an approval request; nothing defined until a second admin approves.
    await submit(page, '#save-button')
    const request = await ApprovalRequest.findByOrFail('action', 'statement_layout.save')
    assert.match(page.url(), /\/admin\/statement-layouts$/)
    assert.include(
      await page.locator('.flash.success').innerText(),
      `approval request #${request.id} opened: waits for a second admin`
    )
    assert.lengthOf(await db.from('statement_layouts'), 0)
    const card = page.locator(`#layouts-pending #pending-request-${request.id}`)
    assert.include(await card.innerText(), 'save statement layout scb-business-net')
    assert.include(await card.innerText(), 'DD TMMM YY')
    assert.equal(await card.locator(`#approve-request-${request.id}`).count(), 0)
    assert.equal(await card.locator(`#reject-request-${request.id}`).innerText(), 'Withdraw')
    await screenshot(page, 'statement-layouts-request-admin')

    // A viewer sees the request and the list, never a form.
    const viewer = await signedInAs('viewer@example.com', 'viewer')
    contexts.push(viewer.context)
    await viewer.page.goto(adminUrl('/statement-layouts'))
    assert.equal(await viewer.page.locator('#new-layout').count(), 0)
    assert.equal(await viewer.page.locator(`#layouts-pending form`).count(), 0)
    assert.include(await viewer.page.locator('#layouts-pending').innerText(), 'scb-business-net')
    await screenshot(viewer.page, 'statement-layouts-request-viewer')
    const refused = await viewer.page.goto(adminUrl('/statement-layouts/new'))
    assert.equal(refused?.status(), 403)

    // The second admin approves on the list.
    const checker = await signedInAs('checker@example.com', 'admin')
    contexts.push(checker.context)
    await checker.page.goto(adminUrl('/statement-layouts'))
    await checker.page.fill(`#approve-form-${request.id} input[name=comment]`, 'sample checked')
    await submit(checker.page, `#approve-form-${request.id} button[type=submit]`)
    assert.include(await checker.page.locator('.flash.success').innerText(), 'approved')
    const [layout] = await db.from('statement_layouts')
    assert.equal(layout.name, 'scb-business-net')
    assert.equal(layout.current_version, 1)
    await checker.page.goto(adminUrl('/statement-layouts'))
    assert.include(await checker.page.locator('#layout-scb-business-net').innerText(), 'SCB')
    await screenshot(checker.page, 'statement-layouts-list')

    await viewer.page.goto(adminUrl(`/statement-layouts/${layout.id}`))
    assert.equal(await viewer.page.locator('#layout-form').count(), 0)
    assert.include(await viewer.page.locator('#layout-current').innerText(), 'DD TMMM YY')
    assert.include(await viewer.page.locator('#layout-versions').innerText(), 'checker@example.com')
    await screenshot(viewer.page, 'statement-layouts-layout-viewer')
  })
})
