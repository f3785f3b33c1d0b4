import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import iconv from 'iconv-lite'
import ExcelJS from 'exceljs'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { saveStatementLayout } from '#reconciliation/actions/save_statement_layout'
import { updateDepositAccount } from '#payments/actions/update_deposit_account'
import { approveRequest } from '#approvals/actions/approve_request'
import type ApprovalRequest from '#approvals/models/approval_request'
import { GATEWAY_ZONE } from '#core/clock'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import { refusal } from '#tests/helpers/actions'
import { operatorActor } from '#tests/helpers/decisions'
import { createDepositAccount, resetDatabase } from '#tests/helpers/merchants'

/**
 * Layouts operators define (docs/reconciliation.md, "Layouts operators
 * define"): the same five transactions written the way four other banks'
 * systems write them (a Buddhist-era Thai-month CSV, an XLSX workbook, a
 * windows-874 CSV, Excel's UTF-16 "Unicode text") each import the same lines
 * through the layout assigned to their deposit account; a refused cell or a
 * declared total that disagrees imports nothing; and a layout, or a change
 * of one, is current only once a second admin approved it.
 */

interface Transaction {
  at: DateTime
  direction: 'credit' | 'debit'
  amount: number
  balance: number
  description: string
}

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
const OPENING = 10_000_00

/** Five transactions two days ago, oldest first, each minute from one instant (Bangkok time). */
function transactions(): Transaction[] {
  const start = DateTime.utc().minus({ days: 2 }).setZone(GATEWAY_ZONE).startOf('minute')
  const moves: Array<Omit<Transaction, 'at' | 'balance'>> = [
    { direction: 'credit', amount: 1_000_00, description: 'รับโอนเงิน จาก X7890 สมชาย ใจดี' },
    { direction: 'credit', amount: 2_500_50, description: 'ชำระบิล Ref1: ABCDEF123456' },
    { direction: 'debit', amount: 1_250_00, description: 'โอนเงิน ไป X2222 บริษัท ผู้ขาย' },
    { direction: 'credit', amount: 300_25, description: 'รับโอน DMOP20261121K3Q9ZP2M7XWA' },
    { direction: 'debit', amount: 50_00, description: 'ค่าธรรมเนียม' },
  ]
  let balance = OPENING
  return moves.map((move, index) => {
    balance += move.direction === 'credit' ? move.amount : -move.amount
    return { ...move, at: start.plus({ minutes: 17 * index }), balance }
  })
}

function totals(rows: Transaction[]) {
  const sum = (direction: string) =>
    rows.filter((row) => row.direction === direction).reduce((total, row) => total + row.amount, 0)
  return { deposits: sum('credit'), withdrawals: sum('debit') }
}

/** A CSV cell, quoted when it holds the delimiter, a quote or a line break. */
function cell(value: string, delimiter = ',') {
  return value.includes(delimiter) || /["\r\n]/.test(value)
    ? `"${value.replaceAll('"', '""')}"`
    : value
}

/** (a) SCB Business Net style: Buddhist era, Thai month abbreviations, a footer of totals. */
const THAI_BE = {
  name: 'scb-business-net',
  bank: 'SCB',
  format: 'csv',
  encoding: 'utf8-bom',
  header_row: 'on',
  skip_rows: '2',
  stop_at: 'รวม',
  date_column: 'วันที่',
  time_column: 'เวลา',
  time_format: 'HH:mm',
  description_column: 'รายการ',
  amount_mode: 'split',
  withdrawal_column: 'ถอนเงิน',
  deposit_column: 'ฝากเงิน',
  balance_column: 'ยอดคงเหลือ',
  date_format: 'DD TMMM YY',
  era: 'be',
  opening_balance_cell: '2:2',
  withdrawals_total_cell: '+1:4',
  deposits_total_cell: '+1:5',
}

function thaiDate(at: DateTime, digits: 2 | 4 = 2) {
  const year = String(at.year + 543)
  return `${at.toFormat('dd')} ${THAI_MONTHS[at.month - 1]} ${digits === 2 ? year.slice(2) : year}`
}

function thaiBeFile(rows: Transaction[], edit: (cells: string[][]) => void = () => {}) {
  const sums = totals(rows)
  const cells = [
    ['รายการเคลื่อนไหวบัญชี บริษัท ตัวอย่าง จำกัด'],
    ['ยอดยกมา', formatThb(OPENING)],
    ['วันที่', 'เวลา', 'รายการ', 'ถอนเงิน', 'ฝากเงิน', 'ยอดคงเหลือ'],
    ...rows.map((row) => [
      thaiDate(row.at),
      row.at.toFormat('HH:mm'),
      row.description,
      row.direction === 'debit' ? formatThb(row.amount) : '',
      row.direction === 'credit' ? formatThb(row.amount) : '',
      formatThb(row.balance),
    ]),
    ['รวม', '', '', formatThb(sums.withdrawals), formatThb(sums.deposits), ''],
  ]
  edit(cells)
  return Buffer.from(
    `\uFEFF${cells.map((row) => row.map((v) => cell(v)).join(',')).join('\r\n')}\r\n`
  )
}

/** (b) An XLSX workbook: real Excel dates and numbers, its own sheet. */
const XLSX = {
  name: 'bbl-biz-xlsx',
  bank: 'BBL',
  format: 'xlsx',
  sheet: 'Statement',
  header_row: 'on',
  date_column: 'Date',
  time_column: 'Time',
  time_format: 'HH:mm',
  description_column: 'Description',
  amount_mode: 'split',
  withdrawal_column: 'Debit',
  deposit_column: 'Credit',
  balance_column: 'Balance',
  date_format: 'DD/MM/YYYY',
  footer_rows: '1',
  closing_balance_cell: '+2:6',
}

async function xlsxFile(rows: Transaction[]) {
  const workbook = new ExcelJS.Workbook()
  workbook.addWorksheet('Summary').getCell('A1').value = 'Account summary'
  const sheet = workbook.addWorksheet('Statement')
  sheet.addRow(['Date', 'Time', 'Description', 'Debit', 'Credit', 'Balance'])
  for (const row of rows) {
    sheet.addRow([
      // Excel holds the wall clock it shows; exceljs gives it as that time in UTC.
      new Date(Date.UTC(row.at.year, row.at.month - 1, row.at.day)),
      row.at.toFormat('HH:mm'),
      row.description,
      row.direction === 'debit' ? row.amount / 100 : null,
      row.direction === 'credit' ? row.amount / 100 : null,
      row.balance / 100,
    ])
  }
  sheet.addRow([])
  sheet.addRow(['Closing balance', null, null, null, null, rows.at(-1)!.balance / 100])
  return Buffer.from(await workbook.xlsx.writeBuffer())
}

/** (c) An older system's windows-874 CSV: no header, Buddhist-era four-digit years, (negative). */
const WINDOWS_874 = {
  name: 'ktb-legacy-874',
  bank: 'KTB',
  format: 'csv',
  encoding: 'windows-874',
  header_row: '',
  skip_rows: '1',
  date_column: '1',
  time_column: '2',
  time_format: 'HH:mm:ss',
  description_column: '3',
  amount_mode: 'signed',
  amount_column: '4',
  balance_column: '5',
  parentheses_negative: 'on',
  date_format: 'DD/MM/YYYY',
  era: 'be',
}

function windows874File(rows: Transaction[]) {
  const text = [
    'รายการเดินบัญชี ธนาคารกรุงไทย',
    ...rows.map((row) =>
      [
        `${row.at.toFormat('dd/LL')}/${row.at.year + 543}`,
        row.at.toFormat('HH:mm:ss'),
        row.description,
        row.direction === 'debit' ? `(${formatThb(row.amount)})` : formatThb(row.amount),
        formatThb(row.balance),
      ]
        .map((value) => cell(value))
        .join(',')
    ),
  ].join('\r\n')
  return iconv.encode(`${text}\r\n`, 'windows-874')
}

/** (d) Excel's "Unicode text": UTF-16 LE with a BOM, tab-separated; a direction column, THB. */
const UTF16 = {
  name: 'krungsri-unicode-text',
  bank: 'BAY',
  format: 'csv',
  encoding: 'utf16le',
  delimiter: 'tab',
  header_row: 'on',
  footer_rows: '1',
  date_column: 'Transaction Date',
  description_column: 'Description',
  amount_mode: 'direction',
  amount_column: 'Amount',
  direction_column: 'Dr/Cr',
  credit_words: 'CR, Credit',
  debit_words: 'DR, Debit',
  balance_column: 'Balance',
  date_format: 'DD-MMM-YYYY HH:mm',
  deposits_count_cell: '+1:2',
  withdrawals_count_cell: '+1:3',
}

function utf16File(rows: Transaction[]) {
  const credits = rows.filter((row) => row.direction === 'credit').length
  const lines = [
    ['Transaction Date', 'Dr/Cr', 'Amount', 'Balance', 'Description'],
    ...rows.map((row) => [
      row.at.setLocale('en').toFormat('dd-LLL-yyyy HH:mm'),
      row.direction === 'credit' ? 'CR' : 'DR',
      `${formatThb(row.amount)} THB`,
      formatThb(row.balance),
      row.description,
    ]),
    ['Items', String(credits), String(rows.length - credits), '', ''],
  ]
  const text = lines.map((line) => line.map((value) => cell(value, '\t')).join('\t')).join('\r\n')
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${text}\r\n`, 'utf16le')])
}

/** The request's second admin approves it. */
async function approvedBy(checker: Actor, request: ApprovalRequest | null) {
  if (!request) throw new Error('expected an approval request')
  await approveRequest({ approval_request_id: request.id, comment: 'checked the sample' }, checker)
}

/** Defines a layout (maker) and assigns it to the account, each approved by the checker. */
async function layoutFor(
  account: DepositAccount,
  layout: Record<string, unknown>,
  maker: Actor,
  checker: Actor
) {
  await approvedBy(checker, (await saveStatementLayout(layout, maker)).request)
  const assigned = await updateDepositAccount(
    { id: account.id, statement_layout_id: layout.name, comment: 'the bank’s own export' },
    maker
  )
  check(assigned.asked.includes('statement_layout_id'))
  await approvedBy(checker, assigned.request)
}

function check(condition: boolean) {
  if (!condition) throw new Error('assertion failed')
}

function importFile(account: DepositAccount, fileName: string, content: Buffer, layout?: string) {
  return importStatement(
    { deposit_account_id: account.id, file_name: fileName, content, layout },
    { name: 'cli:tester' },
    { origin: { channel: 'command' } }
  )
}

async function storedLines(account: DepositAccount) {
  const rows = await db
    .from('statement_lines')
    .where('deposit_account_id', account.id)
    .orderBy('line_at')
    .orderBy('id')
    .select('line_at', 'direction', 'amount', 'balance_after', 'reference')
  return rows.map((row) => [
    new Date(row.line_at).toISOString(),
    row.direction,
    Number(row.amount),
    row.balance_after === null ? null : Number(row.balance_after),
    row.reference,
  ])
}

async function assertNothingStored(assert: any) {
  assert.lengthOf(await db.from('statement_imports'), 0)
  assert.lengthOf(await db.from('statement_lines'), 0)
}

test.group('statement layouts operators define', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(60_000)

  test('a Buddhist-era Thai-month CSV, an XLSX, a windows-874 CSV and a UTF-16 file import the same lines', async ({
    assert,
  }) => {
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: checker } = await operatorActor('checker@example.com', 'admin')
    const rows = transactions()
    const files = [
      { layout: THAI_BE, file: 'scb.csv', bytes: thaiBeFile(rows) },
      { layout: XLSX, file: 'bbl.xlsx', bytes: await xlsxFile(rows) },
      { layout: WINDOWS_874, file: 'ktb.csv', bytes: windows874File(rows) },
      { layout: UTF16, file: 'bay.txt', bytes: utf16File(rows) },
    ]
    const expected = rows.map((row) => [
      row.at.toUTC().toJSDate().toISOString(),
      row.direction,
      row.amount,
      row.balance,
      [null, 'ABCDEF123456', null, 'DMOP20261121K3Q9ZP2M7XWA', null][rows.indexOf(row)],
    ])
    for (const { layout, file, bytes } of files) {
      const account = await createDepositAccount({ channel: 'transfer' })
      await layoutFor(account, layout, maker, checker)
      // No layout named: the one assigned to the account reads it.
      const summary = await importFile(account, file, bytes)
      assert.equal(summary.lines, 5, file)
      assert.deepEqual(await storedLines(account), expected, file)
      const imported = await db
        .from('statement_imports')
        .where('deposit_account_id', account.id)
        .first()
      assert.equal(imported.layout, `${layout.name}@v1`, file)
      const audit = await db
        .from('audit_logs')
        .where('action', 'statement.import')
        .where('subject_id', String(account.id))
        .first()
      assert.equal(json(audit.details).layout, `${layout.name}@v1`)
    }
    // A layout named explicitly reads a file of another account the same way.
    const other = await createDepositAccount({ channel: 'transfer' })
    await importFile(other, 'again.txt', utf16File(rows), 'krungsri-unicode-text')
    assert.deepEqual(await storedLines(other), expected)
  })

  test('a refused cell names the file, its line and column, and nothing is imported', async ({
    assert,
  }) => {
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: checker } = await operatorActor('checker@example.com', 'admin')
    const account = await createDepositAccount({ channel: 'transfer' })
    await layoutFor(account, THAI_BE, maker, checker)
    const rows = transactions()
    const badDate = thaiBeFile(rows, (cells) => {
      cells[6][0] = `31 ก.พ. ${String(rows[3].at.year + 543).slice(2)}`
    })
    assert.deepEqual((await refusal(importFile(account, 'scb-bad.csv', badDate))).errors, [
      {
        field: 'content',
        message: `Nothing imported: scb-bad.csv, scb-business-net@v1: line 7, column 1 "วันที่" (A): "${cellAt(badDate, 7, 1)}" is not a date and time that exists`,
      },
    ])
    const badAmount = thaiBeFile(rows, (cells) => {
      cells[4][4] = '2.500,50'
    })
    assert.equal(
      (await refusal(importFile(account, 'scb-amount.csv', badAmount))).errors[0].message,
      'Nothing imported: scb-amount.csv, scb-business-net@v1: line 5, column 5 "ฝากเงิน" (E): "2.500,50" is not an amount (thousands ",", decimal ".")'
    )
    // A file in another encoding than the layout's: named, not read as garbage.
    const wrongEncoding = iconv.encode(thaiBeFile(rows).toString('utf8').slice(1), 'windows-874')
    assert.match(
      (await refusal(importFile(account, 'scb-874.csv', wrongEncoding))).errors[0].message,
      /^Nothing imported: scb-874\.csv, scb-business-net@v1: line 1: byte 1 of the file is not UTF-8 text/
    )
    await assertNothingStored(assert)
  })

  test('declared figures that disagree with the lines refuse the file, naming the difference', async ({
    assert,
  }) => {
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: checker } = await operatorActor('checker@example.com', 'admin')
    const account = await createDepositAccount({ channel: 'transfer' })
    await layoutFor(account, THAI_BE, maker, checker)
    const rows = transactions()
    const sums = totals(rows)
    // The footer's total edited (a line deleted would break the running balance first).
    const edited = thaiBeFile(rows, (cells) => {
      cells.at(-1)![4] = formatThb(sums.deposits + 100_00)
    })
    assert.equal(
      (await refusal(importFile(account, 'scb-total.csv', edited))).errors[0].message,
      `Nothing imported: scb-total.csv, scb-business-net@v1: line 9, column 5 (E): the file declares deposits totalling ${formatThb(sums.deposits + 100_00)} THB; ` +
        `its lines have 3 deposits totalling ${formatThb(sums.deposits)} THB: a line is missing or was added, or an amount was changed`
    )
    const opening = thaiBeFile(rows, (cells) => {
      cells[1][1] = formatThb(OPENING + 100)
    })
    assert.equal(
      (await refusal(importFile(account, 'scb-opening.csv', opening))).errors[0].message,
      `Nothing imported: scb-opening.csv, scb-business-net@v1: line 2, column 2 (B): the file declares an opening balance of ${formatThb(OPENING + 100)} THB; ` +
        `its earliest line (line 4) opens at ${formatThb(OPENING)} THB`
    )
    const other = await createDepositAccount({ channel: 'transfer' })
    await layoutFor(other, UTF16, maker, checker)
    const counts = utf16File(rows).toString('utf16le').replace('Items\t3\t2', 'Items\t4\t2')
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(counts.slice(1), 'utf16le'),
    ])
    assert.equal(
      (await refusal(importFile(other, 'bay.txt', bytes))).errors[0].message,
      'Nothing imported: bay.txt, krungsri-unicode-text@v1: line 7, column 2 (B): the file declares 4 deposits; its lines have 3: a line is missing'
    )
    await assertNothingStored(assert)
  })

  test('a layout and its changes wait for a second admin; the requester cannot approve; the next import reads with the approved version', async ({
    assert,
  }) => {
    const { actor: maker } = await operatorActor('maker@example.com', 'admin')
    const { actor: checker } = await operatorActor('checker@example.com', 'admin')
    const account = await createDepositAccount({ channel: 'transfer' })
    const rows = transactions()
    const file = thaiBeFile(rows)

    // Version 1 reads years as Gregorian: wrong for this bank.
    const first = await saveStatementLayout({ ...THAI_BE, era: 'ce' }, maker)
    assert.isNull(first.saved)
    assert.equal(first.request!.action, 'statement_layout.save')
    assert.equal(first.request!.targetType, 'statement_layout')
    assert.equal(first.request!.targetId, 'scb-business-net')
    assert.include(first.request!.changeAfter, {
      bank: 'SCB',
      era: 'ce',
      date_format: 'DD TMMM YY',
    })
    const own = await refusal(approveRequest({ approval_request_id: first.request!.id }, maker))
    assert.include(own.message, 'another operator must approve it')
    assert.lengthOf(await db.from('statement_layouts'), 0, 'nothing defined before approval')
    const unknown = await refusal(importFile(account, 'scb.csv', file, 'scb-business-net'))
    assert.deepEqual(unknown.errors, [
      { field: 'layout', message: 'layout must be one of: neutral, kbank, kbiz' },
    ])
    await approvedBy(checker, first.request)

    const [layout] = await db.from('statement_layouts')
    assert.equal(layout.current_version, 1)
    const [version] = await db.from('statement_layout_versions')
    assert.equal(version.saved_by, 'operator:maker@example.com')
    assert.equal(version.approved_by, 'operator:checker@example.com')

    // Assigned to the account: a deposit_account.update, four eyes too.
    const assigned = await updateDepositAccount(
      { id: account.id, statement_layout_id: 'scb-business-net' },
      maker
    )
    assert.deepEqual(assigned.request!.changeBefore, {
      statement_layout_id: 'none',
    })
    assert.deepEqual(assigned.request!.changeAfter, { statement_layout_id: 'scb-business-net' })
    assert.isNull((await account.refresh()).statementLayoutId)
    await approvedBy(checker, assigned.request)
    assert.equal((await account.refresh()).statementLayoutId, layout.id)

    const wrongEra = await refusal(importFile(account, 'scb.csv', file))
    assert.equal(
      wrongEra.errors[0].message,
      'Nothing imported: ' +
        `scb.csv, scb-business-net@v1: line 4, column 1 "วันที่" (A): "${thaiDate(rows[0].at)}" is not a date: ` +
        `the year ${String(rows[0].at.year + 543).slice(2)} is a Buddhist-era year (${rows[0].at.year + 543} BE = ${rows[0].at.year} CE): set the layout's era to BE`
    )

    // Version 2: Buddhist era. Until approved, imports still read with version 1.
    const second = await saveStatementLayout({ ...THAI_BE, comment: 'BE years' }, maker)
    assert.deepEqual(second.request!.changeBefore, { era: 'ce' })
    assert.deepEqual(second.request!.changeAfter, { era: 'be' })
    const again = await refusal(
      saveStatementLayout({ ...THAI_BE, era: 'be', stop_at: 'Total' }, checker)
    )
    assert.include(again.message, 'is already pending')
    assert.include((await refusal(importFile(account, 'scb.csv', file))).message, '@v1: line 4')
    await approvedBy(checker, second.request)

    const summary = await importFile(account, 'scb.csv', file)
    assert.equal(summary.newLines, 5)
    const imported = await db.from('statement_imports').first()
    assert.equal(imported.layout, 'scb-business-net@v2')
    const versions = await db.from('statement_layout_versions').orderBy('version')
    assert.deepEqual(
      versions.map((row) => [row.version, json(row.definition).era]),
      [
        [1, 'ce'],
        [2, 'be'],
      ]
    )
    const audits = await db
      .from('audit_logs')
      .where('action', 'statement_layout.save')
      .orderBy('id')
      .select('actor', 'before_values', 'after_values', 'details')
    assert.deepEqual(
      audits.map((row) => [row.actor, json(row.details).version]),
      [
        ['operator:checker@example.com', 1],
        ['operator:checker@example.com', 2],
      ]
    )
    assert.deepEqual(json(audits[1].after_values), { era: 'be' })

    // The same definition again changes nothing.
    const same = await refusal(saveStatementLayout(THAI_BE, maker))
    assert.include(same.message, 'already reads files this way (version 2)')
    // A built-in layout's name cannot be taken.
    const reserved = await refusal(saveStatementLayout({ ...THAI_BE, name: 'kbiz' }, maker))
    assert.include(reserved.message, 'is a built-in layout')
  })
})

function json(value: unknown) {
  return typeof value === 'string' ? JSON.parse(value) : value
}

/** A cell of a CSV buffer, for messages: its line (1-based) and column (1-based). */
function cellAt(bytes: Buffer, line: number, column: number) {
  return bytes
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .split('\r\n')
    [line - 1].split(',')[column - 1]
}
