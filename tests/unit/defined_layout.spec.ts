import { test } from '@japa/runner'
import iconv from 'iconv-lite'
import ExcelJS from 'exceljs'
import { ActionError } from '#core/validation'
import { validateDefinition, type LayoutDefinition } from '#reconciliation/layouts/definition'
import { definedLayoutEvents, definedLayoutLines } from '#reconciliation/layouts/defined_layout'
import { bangkokInstant, gregorianYear, readWithFormat } from '#reconciliation/layouts/dates'
import { readAmount } from '#reconciliation/layouts/cells'
import { previewDefinedLayout } from '#reconciliation/layouts/preview'
import { decodeText } from '#reconciliation/layouts/decode'

/**
 * The engine of the layouts operators define (app/reconciliation/layouts/
 * defined_layout.ts): date conventions (Buddhist era, Thai and English
 * months, two-digit years), amount conventions (separators, parentheses,
 * trailing minus, currency), encodings, XLSX cells, and the refusals that
 * name line and column.
 */

const AMOUNTS = {
  thousands: 'comma',
  decimal: 'dot',
  parentheses_negative: false,
  trailing_minus: false,
} as const

async function definition(input: Record<string, unknown>): Promise<LayoutDefinition> {
  return validateDefinition(input)
}

async function lines(def: LayoutDefinition, bytes: Buffer) {
  const found = []
  for await (const line of definedLayoutLines(def, bytes)) found.push(line)
  return found
}

async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (thrown) => thrown
  )
  if (!error) throw new Error('expected a refusal')
  return (error as Error).message
}

test.group('Defined layouts: dates', () => {
  test('Buddhist-era years, two or four digits; Thai and English month names', ({ assert }) => {
    assert.deepEqual(readWithFormat('05 ธ.ค. 69', 'DD TMMM YY'), {
      day: 5,
      month: 12,
      year: 69,
      shortYear: true,
    })
    assert.equal(readWithFormat('5 ธค 2569', 'D TMMM YYYY')?.month, 12, 'dots are optional')
    assert.equal(readWithFormat('1 มกราคม 2569', 'D TMMMM YYYY')?.month, 1)
    assert.equal(readWithFormat('14 กุมภาพันธ์ 2569', 'D TMMMM YYYY')?.month, 2)
    assert.equal(readWithFormat('07-Sep-2026', 'DD-MMM-YYYY')?.month, 9)
    assert.equal(readWithFormat('07 September 2026', 'DD MMMM YYYY')?.month, 9)
    assert.isNull(readWithFormat('07 Sepp 2026', 'DD MMM YYYY'))
    assert.isNull(readWithFormat('05 ธ.ค. 69', 'DD/MM/YY'))
    assert.deepEqual(readWithFormat('21/11/2569 15:52:30', 'DD/MM/YYYY HH:mm:ss'), {
      day: 21,
      month: 11,
      year: 2569,
      hour: 15,
      minute: 52,
      second: 30,
    })

    assert.deepEqual(gregorianYear(69, true, 'be'), { year: 2026 })
    assert.deepEqual(gregorianYear(2569, false, 'be'), { year: 2026 })
    assert.deepEqual(gregorianYear(26, true, 'ce'), { year: 2026 })
    assert.match(
      (gregorianYear(2569, false, 'ce') as { error: string }).error,
      /Buddhist-era year .* set the layout's era to BE/
    )
    assert.match(
      (gregorianYear(2026, false, 'be') as { error: string }).error,
      /Gregorian year \(2026\): set the layout's era to CE/
    )
    assert.equal(
      (gregorianYear(69, true, 'ce', 2027) as { error: string }).error,
      "the year 69 is a Buddhist-era year (2569 BE = 2026 CE): set the layout's era to BE"
    )
  })

  test('wall-clock times are Bangkok time (GMT+7); impossible dates are refused', ({ assert }) => {
    assert.equal(bangkokInstant(2026, 12, 5, 9, 30)!.toISOString(), '2026-12-05T02:30:00.000Z')
    assert.equal(bangkokInstant(2026, 1, 1, 3)!.toISOString(), '2025-12-31T20:00:00.000Z')
    assert.isNull(bangkokInstant(2026, 2, 29))
    assert.isNull(bangkokInstant(2026, 4, 31))
  })
})

test.group('Defined layouts: amounts', () => {
  test('separators, decimal mark, signs and currency', ({ assert }) => {
    const read = (text: string | number, options = {}) =>
      readAmount(text, { ...AMOUNTS, ...options })
    assert.deepEqual(read('1,234.50'), { satang: 123_450 })
    assert.deepEqual(read('1234.5'), { satang: 123_450 })
    assert.deepEqual(read('-20.00'), { satang: -2000 })
    assert.deepEqual(read('฿ 3,470.00'), { satang: 347_000 })
    assert.deepEqual(read('3,470.00 THB'), { satang: 347_000 })
    assert.deepEqual(read('100 บาท'), { satang: 10_000 })
    assert.deepEqual(read(''), null)
    assert.deepEqual(read(1234.56), { satang: 123_456 })
    assert.deepEqual(read(-0.1), { satang: -10 })
    assert.property(read(1.234), 'error')
    assert.property(read('12,34.00'), 'error', 'thousands groups of three')
    assert.property(read('1.234,50'), 'error', 'the other convention')
    assert.deepEqual(read('1.234,50', { thousands: 'dot', decimal: 'comma' }), { satang: 123_450 })
    assert.deepEqual(read('1 234,50', { thousands: 'space', decimal: 'comma' }), {
      satang: 123_450,
    })
    assert.deepEqual(read("1'234.50", { thousands: 'apostrophe' }), { satang: 123_450 })
    assert.property(read('(1,250.00)'), 'error', 'parentheses only when the layout says so')
    assert.deepEqual(read('(1,250.00)', { parentheses_negative: true }), { satang: -125_000 })
    assert.property(read('1,250.00-'), 'error', 'a trailing minus only when the layout says so')
    assert.deepEqual(read('1,250.00-', { trailing_minus: true }), { satang: -125_000 })
    assert.match(
      (read('(-1.00)', { parentheses_negative: true }) as { error: string }).error,
      /negative twice/
    )
    assert.property(read('12.345'), 'error', 'three decimals')
  })
})

test.group('Defined layouts: definitions', () => {
  test('options that belong together are checked together, each beside its field', async ({
    assert,
  }) => {
    const error = await validateDefinition({
      format: 'csv',
      header_row: '',
      date_column: 'Date',
      amount_mode: 'direction',
      amount_column: '4',
      date_format: 'MM/YYYY',
      thousands: 'dot',
      decimal: 'dot',
      time_column: '2',
    }).catch((thrown) => thrown)
    assert.instanceOf(error, ActionError)
    const fields = (error as ActionError).errors.map((item) => item.field)
    assert.includeMembers(fields, [
      'direction_column',
      'credit_words',
      'debit_words',
      'date_column',
      'decimal',
      'date_format',
      'time_format',
    ])
    const cell = await validateDefinition({
      format: 'csv',
      date_column: '1',
      amount_mode: 'signed',
      amount_column: '2',
      date_format: 'DD/MM/YYYY',
      closing_balance_cell: 'row eight',
    }).catch((thrown) => thrown)
    assert.deepEqual(
      (cell as ActionError).errors.map((item) => item.field),
      ['closing_balance_cell']
    )
    const ok = await validateDefinition({
      format: 'csv',
      date_column: '1',
      amount_mode: 'signed',
      amount_column: '2',
      date_format: 'DD/MM/YYYY',
      closing_balance_cell: '+2:M',
      details_columns: '4, 5',
    })
    assert.equal(ok.closing_balance_cell, '+2:13')
    assert.deepEqual(ok.details_columns, [4, 5])
    assert.equal(ok.encoding, 'utf8')
  })
})

test.group('Defined layouts: files', () => {
  const buddhist = {
    format: 'csv',
    header_row: 'on',
    skip_rows: '2',
    stop_at: 'รวม',
    date_column: 'วันที่',
    time_column: 'เวลา',
    time_format: 'HH:mm',
    description_column: 'รายการ',
    amount_mode: 'split',
    withdrawal_column: 'ถอน',
    deposit_column: 'ฝาก',
    balance_column: 'คงเหลือ',
    date_format: 'DD TMMM YY',
    era: 'be',
    deposits_total_cell: '+1:5',
    withdrawals_total_cell: '+1:4',
  }
  const file = [
    'บริษัท ตัวอย่าง จำกัด',
    'เลขที่บัญชี xxx-x-x1234-x',
    'วันที่,เวลา,รายการ,ถอน,ฝาก,คงเหลือ',
    '05 ธ.ค. 69,09:30,รับโอน,,"1,000.00","11,000.00"',
    '',
    '05 ธ.ค. 69,10:05,โอนออก,250.00,,"10,750.00"',
    'รวม,,,250.00,"1,000.00",',
  ].join('\r\n')

  test('a Buddhist-era Thai-month CSV: lines, times in GMT+7, footer totals checked', async ({
    assert,
  }) => {
    const def = await definition(buddhist)
    const found = await lines(def, Buffer.from(file))
    assert.deepEqual(
      found.map((line) => [
        line.lineNumber,
        line.lineAt.toISOString(),
        line.direction,
        line.amount,
        line.balanceAfter,
        line.description,
      ]),
      [
        [4, '2026-12-05T02:30:00.000Z', 'credit', 100_000, 1_100_000, 'รับโอน'],
        [6, '2026-12-05T03:05:00.000Z', 'debit', 25_000, 1_075_000, 'โอนออก'],
      ]
    )
    const edited = file.replace('รวม,,,250.00,"1,000.00",', 'รวม,,,250.00,"1,100.00",')
    assert.equal(
      await refusal(lines(def, Buffer.from(edited))),
      'line 7, column 5 (E): the file declares deposits totalling 1,100.00 THB; its lines have 1 deposit totalling 1,000.00 THB: a line is missing or was added, or an amount was changed'
    )
  })

  test('every refused cell names its line and column; the preview lists them all', async ({
    assert,
  }) => {
    const def = await definition(buddhist)
    const bad = file
      .replace('05 ธ.ค. 69,09:30', '32 ธ.ค. 69,09:30')
      .replace('250.00,,"10,750.00"', '250.00,"5.00","10,750.00"')
    assert.equal(
      await refusal(lines(def, Buffer.from(bad))),
      'line 4, column 1 "วันที่" (A): "32 ธ.ค. 69" is not a date and time that exists'
    )
    const preview = await previewDefinedLayout(def, Buffer.from(bad))
    assert.isNull(preview.fileError)
    assert.isFalse(preview.importable)
    assert.deepEqual(
      preview.problems.map((problem) => [problem.line, problem.column]),
      [
        [4, 'column 1 "วันที่" (A)'],
        [6, 'column 4 "ถอน" (D) (withdrawal) and column 5 "ฝาก" (E) (deposit)'],
      ]
    )
    const missing = await previewDefinedLayout(
      await definition({ ...buddhist, balance_column: 'Balance' }),
      Buffer.from(file)
    )
    assert.match(missing.fileError!, /^line 3: the header row has no column "Balance"/)
  })

  test('a signed amount column with a direction of its own, positional, two-digit CE years', async ({
    assert,
  }) => {
    const def = await definition({
      format: 'csv',
      delimiter: 'semicolon',
      date_column: '1',
      amount_mode: 'direction',
      amount_column: '3',
      direction_column: '2',
      credit_words: 'CR, X1',
      debit_words: 'DR, X2',
      thousands: 'dot',
      decimal: 'comma',
      date_format: 'DD/MM/YY HH:mm',
      reference_column: '4',
    })
    const found = await lines(
      def,
      Buffer.from('21/11/26 15:50;X1;1.250,00;dmop20261121k3q9zp2m7xwa\n21/11/26 16:00;DR;5,00;\n')
    )
    assert.deepEqual(
      found.map((line) => [line.direction, line.amount, line.reference, line.lineAt.toISOString()]),
      [
        ['credit', 125_000, 'DMOP20261121K3Q9ZP2M7XWA', '2026-11-21T08:50:00.000Z'],
        ['debit', 500, null, '2026-11-21T09:00:00.000Z'],
      ]
    )
    assert.equal(
      await refusal(lines(def, Buffer.from('21/11/26 15:50;IN;1.250,00;\n'))),
      'line 1, column 2 (B): "IN" is not a direction: money in is "CR", "X1"; money out is "DR", "X2"'
    )
  })

  test('encodings: a BOM decides; windows-874 and UTF-16 as declared; not UTF-8 is named', async ({
    assert,
  }) => {
    const text = 'วันที่,ยอด\n05 ธ.ค. 69,100.00\n'
    assert.equal(decodeText(iconv.encode(text, 'windows-874'), 'windows-874'), text)
    assert.equal(
      decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), 'utf8'),
      text
    )
    assert.equal(decodeText(Buffer.from(text, 'utf16le'), 'utf16le'), text)
    assert.equal(decodeText(iconv.encode(text, 'utf-16be'), 'utf16be'), text)
    assert.equal(decodeText(Buffer.from(`\uFEFF${text}`), 'utf8-bom'), text)
    assert.throws(
      () => decodeText(iconv.encode(text, 'windows-874'), 'utf8'),
      /^line 1: byte 1 of the file is not UTF-8 text: the file may be windows-874/
    )
  })

  test('XLSX: real Excel dates are Bangkok wall-clock times, numbers are amounts', async ({
    assert,
  }) => {
    const workbook = new ExcelJS.Workbook()
    workbook.addWorksheet('Cover').getCell('A1').value = 'not this one'
    const sheet = workbook.addWorksheet('Statement')
    sheet.addRow(['Date', 'Time', 'Amount', 'Note'])
    // Excel shows 05/12/2026 09:30 and 10:05: exceljs hands them over as UTC instants of that wall clock.
    sheet.addRow([
      new Date(Date.UTC(2026, 11, 5)),
      new Date(Date.UTC(1899, 11, 30, 9, 30)),
      1000,
      'in',
    ])
    sheet.addRow([
      '05/12/2026',
      '10:05',
      -250.5,
      { richText: [{ text: 'out ' }, { text: 'Ref1: ABCD1234' }] },
    ])
    sheet.addRow([
      new Date(Date.UTC(2026, 11, 5, 11, 15)),
      null,
      { formula: 'C2/10', result: 100 },
      'formula',
    ])
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer())
    const def = await definition({
      format: 'xlsx',
      sheet: 'Statement',
      header_row: 'on',
      date_column: 'date',
      time_column: 'TIME',
      time_format: 'HH:mm',
      amount_mode: 'signed',
      amount_column: 'Amount',
      description_column: 'Note',
      date_format: 'DD/MM/YYYY',
    })
    const found = await lines(def, bytes)
    assert.deepEqual(
      found.map((line) => [
        line.lineNumber,
        line.lineAt.toISOString(),
        line.direction,
        line.amount,
        line.reference,
      ]),
      [
        [2, '2026-12-05T02:30:00.000Z', 'credit', 100_000, null],
        [3, '2026-12-05T03:05:00.000Z', 'debit', 25_050, 'ABCD1234'],
        [4, '2026-12-05T04:15:00.000Z', 'credit', 10_000, null],
      ]
    )
    const noSheet = await previewDefinedLayout({ ...def, sheet: 'Missing' }, bytes)
    assert.equal(
      noSheet.fileError,
      'the workbook has no sheet "Missing" (its sheets: "Cover", "Statement")'
    )
  })

  test('footer rows are not lines; a declared count after the last line is checked', async ({
    assert,
  }) => {
    const def = await definition({
      format: 'csv',
      delimiter: 'tab',
      date_column: '1',
      amount_mode: 'signed',
      amount_column: '2',
      balance_column: '3',
      date_format: 'YYYY-MM-DD',
      footer_rows: '2',
      // Counted from the last line: the empty row is +1.
      deposits_count_cell: '+3:2',
      closing_balance_cell: '+2:3',
      opening_balance_cell: '+2:4',
    })
    const body =
      '2026-12-01\t100.00\t1100.00\n2026-12-02\t-40.00\t1060.00\n\nClosing\t\t1060.00\t1000.00\nDeposits\t1\n'
    const events = []
    for await (const event of definedLayoutEvents(def, Buffer.from(body))) events.push(event)
    assert.deepEqual(
      events.map((event) => event.kind),
      ['line', 'line', 'figures']
    )
    const figures = events.at(-1) as { checks: Array<{ figure: string; ok: boolean }> }
    assert.deepEqual(
      figures.checks.map((check) => [check.figure, check.ok]),
      [
        ['number of deposits', true],
        ['closing balance', true],
        ['opening balance', true],
      ]
    )
    assert.equal(
      await refusal(lines(def, Buffer.from(body.replace('Deposits\t1', 'Deposits\t2')))),
      'line 5, column 2 (B): the file declares 2 deposits; its lines have 1: a line is missing'
    )
  })
})
