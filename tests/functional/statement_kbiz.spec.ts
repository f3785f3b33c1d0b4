import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#payments/models/deposit_account'
import { importStatement } from '#reconciliation/actions/import_statement'
import { detectLayout, parseStatement } from '#reconciliation/layouts/index'
import { ActionError } from '#core/validation'
import { StatementFormatError } from '#reconciliation/statement_line'
import { GATEWAY_ZONE } from '#core/clock'
import { formatThb } from '#core/money'
import { ace } from '#tests/helpers/ace'
import { createPayment } from '#tests/helpers/decisions'
import {
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
} from '#tests/helpers/merchants'

/**
 * KBank's KBiz CSV export as the bank writes it (docs/reconciliation.md,
 * `kbiz`): a BOM and a Thai title, the declared figures at fixed rows and
 * columns, then one transaction per row of 13 columns. The file is
 * recognised by its title, and its declared figures are checked against its
 * lines: a file that disagrees with itself imports nothing.
 */

interface KbizRow {
  at: DateTime
  withdrawal?: number
  deposit?: number
  balance: number
  description: string
  details: string
  /** The time in column 3 (the default) or after the date in column 2. */
  timeInDateCell?: boolean
  /** A cell to override, by column (1-based), after the rest is written. */
  override?: Record<number, string>
}

interface KbizFigures {
  period: string
  ending: number
  withdrawals: [number, number]
  deposits: [number, number]
}

/** A CSV cell, quoted when it holds a comma, a quote or a line break. */
function cell(value: string) {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** A 13-column row: `cells` by column number (1-based). */
function csvRow(cells: Record<number, string>) {
  return Array.from({ length: 13 }, (_, index) => cell(cells[index + 1] ?? '')).join(',')
}

function money(satang: number) {
  return formatThb(satang)
}

/** The file, rows 1 to 12 then the transactions, CRLF line ends as the bank writes them. */
function kbizFile(figures: KbizFigures, rows: KbizRow[]) {
  const header = [
    csvRow({ 1: '\uFEFFรายการเดินบัญชีเงินฝากออมทรัพย์ (มีรายละเอียด)' }),
    csvRow({ 1: 'ชื่อบัญชี', 2: 'บริษัท ตัวอย่าง จำกัด' }),
    csvRow({ 1: 'เลขที่บัญชี', 2: 'xxx-x-x1234-x' }),
    csvRow({ 1: 'สาขา', 2: 'สาขาสีลม' }),
    csvRow({}),
    csvRow({ 11: 'รอบระหว่างวันที่', 12: figures.period }),
    csvRow({}),
    csvRow({ 11: 'ยอดยกไป', 13: money(figures.ending) }),
    csvRow({
      9: 'รายการถอน',
      10: String(figures.withdrawals[0]),
      12: 'ยอดถอน',
      13: money(figures.withdrawals[1]),
    }),
    csvRow({
      9: 'รายการฝาก',
      10: String(figures.deposits[0]),
      12: 'ยอดฝาก',
      13: money(figures.deposits[1]),
    }),
    csvRow({
      2: 'วันที่',
      3: 'เวลา',
      4: 'รายการ',
      5: 'ถอนเงิน',
      7: 'ฝากเงิน',
      9: 'ยอดคงเหลือ',
      13: 'รายละเอียด',
    }),
    csvRow({
      2: 'Date',
      3: 'Time',
      4: 'Description',
      5: 'Withdrawal',
      7: 'Deposit',
      9: 'Balance',
      13: 'Details',
    }),
  ]
  const lines = rows.map((row) => {
    const local = row.at.setZone(GATEWAY_ZONE)
    return csvRow({
      2: row.timeInDateCell ? local.toFormat('dd/LL/yy HH:mm') : local.toFormat('dd/LL/yy'),
      3: row.timeInDateCell ? '' : local.toFormat('HH:mm'),
      4: row.description,
      5: row.withdrawal === undefined ? '' : money(row.withdrawal),
      7: row.deposit === undefined ? '' : money(row.deposit),
      9: money(row.balance),
      13: row.details,
      ...row.override,
    })
  })
  return [...header, ...lines].join('\r\n') + '\r\n'
}

/** The period `dd/mm/yyyy - dd/mm/yyyy` from yesterday to today, Bangkok time. */
function periodAround(now: DateTime) {
  const today = now.setZone(GATEWAY_ZONE)
  return `${today.minus({ days: 1 }).toFormat('dd/LL/yyyy')} - ${today.toFormat('dd/LL/yyyy')}`
}

function importFile(account: DepositAccount, content: string, layout?: string) {
  return importStatement(
    { deposit_account_id: account.id, layout, file_name: 'kbiz.csv', content },
    { name: 'test' }
  )
}

/** The message of the ActionError an action throws (fails the test if it resolves). */
async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (thrown) => thrown
  )
  if (!(error instanceof ActionError)) throw new Error(`expected an ActionError, got ${error}`)
  return error.errors.map((item) => item.message).join('\n')
}

async function assertNothingStored(assert: any) {
  assert.lengthOf(await db.from('statement_imports'), 0)
  assert.lengthOf(await db.from('statement_lines'), 0)
  assert.lengthOf(await db.from('ledger_transactions'), 0)
}

/**
 * Two open orders and the bank's statement of them, newest first: the
 * account opens at 10,000.00, pays out 1,250.00, then receives the two
 * transfers (one names its order, one fits the other's amount and time).
 */
async function scene() {
  const who = await createDepositMerchant()
  const account = await createDepositAccount()
  const named = await createPayment(who, '1500.00')
  const fitting = await createPayment(who, '2300.00')
  const now = DateTime.utc()
  const opening = 10_000_00
  const afterDebit = opening - 1_250_00
  const afterNamed = afterDebit + named.transferAmount
  const ending = afterNamed + fitting.transferAmount
  const rows: KbizRow[] = [
    {
      at: now,
      deposit: fitting.transferAmount,
      balance: ending,
      description: 'รับโอนเงิน',
      details: 'K PLUS, From X7890 Somchai Jaidee',
    },
    {
      at: now,
      deposit: named.transferAmount,
      balance: afterNamed,
      description: 'รับโอนเงิน',
      details: `K PLUS, From X1111 ${named.platformOrderId}`,
    },
    {
      at: now.minus({ minutes: 20 }),
      withdrawal: 1_250_00,
      balance: afterDebit,
      description: 'โอนเงิน',
      details: 'K BIZ, To X2222 Supplier Co., Ltd.',
    },
  ]
  const figures: KbizFigures = {
    period: periodAround(now),
    ending,
    withdrawals: [1, 1_250_00],
    deposits: [2, named.transferAmount + fitting.transferAmount],
  }
  return { who, account, named, fitting, now, rows, figures, ending, afterNamed, afterDebit }
}

test.group('statement import: the KBank KBiz export', (group) => {
  let directory: string
  group.each.setup(async () => {
    await resetDatabase()
    directory = await mkdtemp(join(tmpdir(), 'gw-kbiz-'))
    return () => rm(directory, { recursive: true, force: true })
  })
  group.each.timeout(60_000)

  test('recognised by its title, imported with its balances, its credits pay their orders; the same file again adds nothing', async ({
    assert,
  }) => {
    const { account, named, fitting, rows, figures, ending, afterNamed, afterDebit } = await scene()
    const content = kbizFile(figures, rows)
    assert.equal(detectLayout(content), 'kbiz')
    assert.isNull(detectLayout('date_time,direction,amount\n'))

    const summary = await importFile(account, content)
    assert.deepInclude(summary, { lines: 3, newLines: 3 })
    assert.equal(summary.results.matched, 2)
    const [imported] = await db.from('statement_imports')
    assert.equal(imported.layout, 'kbiz')

    const lines = await db.from('statement_lines').orderBy('id')
    assert.deepEqual(
      lines.map((line) => [line.direction, Number(line.amount), Number(line.balance_after)]),
      [
        ['credit', fitting.transferAmount, ending],
        ['credit', named.transferAmount, afterNamed],
        ['debit', 1_250_00, afterDebit],
      ]
    )
    // No transaction reference in the file: each transfer is known by its running balance.
    assert.isTrue(lines.every((line) => line.transfer_key.startsWith('bal|')))
    assert.equal(lines[1].reference, named.platformOrderId)
    assert.equal(lines[0].description, 'รับโอนเงิน | K PLUS, From X7890 Somchai Jaidee')
    assert.equal((await named.refresh()).status, 'unsettled_paid')
    assert.equal((await fitting.refresh()).status, 'unsettled_paid')

    const again = await importFile(account, content)
    assert.deepInclude(again, { lines: 3, newLines: 0 })
    assert.equal(again.results.matched, 0)
    assert.lengthOf(await db.from('statement_lines'), 3)
    assert.lengthOf(await db.from('ledger_transactions').where('kind', 'payment_paid'), 2)
  })

  test('oldest first, the time in the date cell: the latest line is the last row', async ({
    assert,
  }) => {
    const account = await createDepositAccount()
    const now = DateTime.utc()
    const rows: KbizRow[] = [
      {
        at: now.minus({ minutes: 30 }),
        deposit: 100_00,
        balance: 5_100_00,
        description: 'รับโอนเงิน',
        details: 'K PLUS, From X1',
        timeInDateCell: true,
      },
      {
        at: now.minus({ minutes: 10 }),
        withdrawal: 2_000_00,
        balance: 3_100_00,
        description: 'โอนเงิน',
        details: 'K BIZ, To X2',
        timeInDateCell: true,
      },
    ]
    const figures: KbizFigures = {
      period: periodAround(now),
      ending: 3_100_00,
      withdrawals: [1, 2_000_00],
      deposits: [1, 100_00],
    }
    const summary = await importFile(account, kbizFile(figures, rows))
    assert.deepInclude(summary, { lines: 2, newLines: 2 })
    const lines = await db.from('statement_lines').orderBy('id')
    assert.deepEqual(
      lines.map((line) => DateTime.fromJSDate(line.line_at).toUTC().toISO()),
      rows.map((row) => row.at.startOf('minute').toUTC().toISO())
    )

    // The same transfers written newest first are the same statement: its latest line is now the first row.
    const newestFirst = [...rows].reverse()
    const other = await createDepositAccount()
    assert.equal(
      await refusal(importFile(other, kbizFile({ ...figures, ending: 5_100_00 }, newestFirst))),
      'Nothing imported: kbiz.csv, kbiz: line 8, column 13: the file declares an ending balance of 5,100.00 THB; ' +
        'its latest line (line 13) leaves 3,100.00 THB'
    )
    assert.deepInclude(await importFile(other, kbizFile(figures, newestFirst)), {
      lines: 2,
      newLines: 2,
    })
  })

  test('a file whose declared figures disagree with its lines is refused, naming both; nothing is stored', async ({
    assert,
  }) => {
    const { account, rows, figures, ending, now } = await scene()
    const deposits = figures.deposits[1]

    let message = await refusal(
      importFile(account, kbizFile({ ...figures, deposits: [3, deposits] }, rows))
    )
    assert.equal(
      message,
      `Nothing imported: kbiz.csv, kbiz: line 10: the file declares 3 deposits totalling ${money(deposits)} THB; ` +
        `its lines have 2 totalling ${money(deposits)} THB: a line is missing`
    )

    message = await refusal(
      importFile(account, kbizFile({ ...figures, deposits: [2, deposits + 100] }, rows))
    )
    assert.equal(
      message,
      `Nothing imported: kbiz.csv, kbiz: line 10: the file declares 2 deposits totalling ${money(deposits + 100)} THB; ` +
        `its lines have 2 totalling ${money(deposits)} THB: an amount was changed`
    )

    // The earliest line left out: the chain still holds, the declared withdrawals do not.
    message = await refusal(importFile(account, kbizFile(figures, rows.slice(0, 2))))
    assert.equal(
      message,
      'Nothing imported: kbiz.csv, kbiz: line 9: the file declares 1 withdrawal totalling 1,250.00 THB; ' +
        'its lines have 0 totalling 0.00 THB: a line is missing'
    )

    message = await refusal(
      importFile(account, kbizFile({ ...figures, ending: ending + 1_000_00 }, rows))
    )
    assert.equal(
      message,
      `Nothing imported: kbiz.csv, kbiz: line 8, column 13: the file declares an ending balance of ${money(ending + 1_000_00)} THB; ` +
        `its latest line (line 13) leaves ${money(ending)} THB`
    )

    const local = now.setZone(GATEWAY_ZONE)
    const before = `${local.minus({ days: 9 }).toFormat('dd/LL/yyyy')} - ${local.minus({ days: 2 }).toFormat('dd/LL/yyyy')}`
    message = await refusal(importFile(account, kbizFile({ ...figures, period: before }, rows)))
    assert.equal(
      message,
      `Nothing imported: kbiz.csv, kbiz: line 13, column 2: the line is dated ${local.toFormat('dd/LL/yy')}, ` +
        `outside the period the file declares (${before}): the file was edited, or is not the bank's`
    )
    await assertNothingStored(assert)
  })

  test('the opening balance the lines imply must be the declared one', async ({ assert }) => {
    const now = DateTime.utc()
    // Counts, totals and the ending agree; the earliest line does not follow from the declared opening.
    const rows: KbizRow[] = [
      { at: now, deposit: 100_00, balance: 1_100_00, description: 'A', details: '' },
      {
        at: now.minus({ minutes: 5 }),
        deposit: 200_00,
        balance: 900_00,
        description: 'B',
        details: '',
      },
    ]
    const file = kbizFile(
      { period: periodAround(now), ending: 1_100_00, withdrawals: [0, 0], deposits: [2, 300_00] },
      rows
    )
    const read = async () => {
      for await (const line of parseStatement('kbiz', file)) assert.isObject(line)
    }
    await assert.rejects(
      read,
      StatementFormatError,
      'line 14: the file declares an opening balance of 800.00 THB (ending 1,100.00 − deposits 300.00 + withdrawals 0.00); its earliest line opens at 700.00 THB'
    )
  })

  test('a row with both a withdrawal and a deposit is refused, naming its line and columns; bad cells name theirs', async ({
    assert,
  }) => {
    const { account, rows, figures } = await scene()
    const both = rows.map((row, index) => (index === 1 ? { ...row, override: { 5: '1.00' } } : row))
    assert.equal(
      await refusal(importFile(account, kbizFile(figures, both))),
      'Nothing imported: kbiz.csv, kbiz: line 14, columns 5 (withdrawal) and 7 (deposit): both are set ' +
        `("1.00", "${money(rows[1].deposit!)}"), where a row has exactly one`
    )
    const badBalance = rows.map((row, index) =>
      index === 2 ? { ...row, override: { 9: '12,3x4.00' } } : row
    )
    assert.equal(
      await refusal(importFile(account, kbizFile(figures, badBalance))),
      'Nothing imported: kbiz.csv, kbiz: line 15, column 9: "12,3x4.00" is not the balance (an amount)'
    )
    const badCount = kbizFile(figures, rows).replace(',รายการฝาก,2,', ',รายการฝาก,two,')
    assert.equal(
      await refusal(importFile(account, badCount)),
      'Nothing imported: kbiz.csv, kbiz: line 10, column 10: "two" is not the number of deposits'
    )
    // Given another layout explicitly, the file is read as that layout.
    assert.match(
      await refusal(importFile(account, kbizFile(figures, rows), 'neutral')),
      /^Nothing imported: kbiz\.csv, neutral: missing column\(s\) date_time/
    )
    await assertNothingStored(assert)
  })

  test('statements:import FILE --account N without --layout recognises the file', async ({
    assert,
  }) => {
    const { account, named, fitting, rows, figures } = await scene()
    const path = join(directory, 'kbiz.csv')
    await writeFile(path, kbizFile(figures, rows))
    const result = await ace('statements:import', path, `--account=${account.id}`)
    assert.equal(result.code, 0, result.output)
    assert.include(result.output, '3 lines, 3 new: 2 matched, 0 late, 1 unmatched')
    assert.equal((await db.from('statement_imports').first()).layout, 'kbiz')
    assert.equal((await named.refresh()).status, 'unsettled_paid')
    assert.equal((await fitting.refresh()).status, 'unsettled_paid')
  })
})
