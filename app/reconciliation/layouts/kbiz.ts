import { DateTime } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'
import { formatThb } from '#core/money'
import {
  findReference,
  parseStatementAmount,
  StatementFormatError,
  type ParsedStatementLine,
} from '#reconciliation/statement_line'

/** A CSV record read by position: its cells and the file's line it starts on. */
export interface StatementRow {
  cells: string[]
  lineNumber: number
}

/** How every KBiz statement title starts, whatever the account's kind (savings, current…). */
export const KBIZ_TITLE = 'รายการเดินบัญชี'

/** Rows of the file, counted from 1 as the bank writes them (docs/reconciliation.md, `kbiz`). */
const ROW = { title: 1, period: 6, ending: 8, withdrawals: 9, deposits: 10, firstLine: 13 }
/** Columns, counted from 1. */
const COLUMN = {
  title: 1,
  period: 12,
  count: 10,
  figure: 13,
  date: 2,
  time: 3,
  description: 4,
  withdrawal: 5,
  deposit: 7,
  balance: 9,
  details: 13,
}
const TRANSACTION_COLUMNS = 13

/** A calendar date as a comparable number, yyyymmdd. */
type Day = number

interface Declared {
  period: { from: Day; to: Day; text: string }
  ending: number
  withdrawals: { count: number; total: number }
  deposits: { count: number; total: number }
}

export type Balanced = ParsedStatementLine & { balanceAfter: number }

const DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/
const PERIOD = /^(\d{1,2})\/(\d{1,2})\/(\d{4})\s*-\s*(\d{1,2})\/(\d{1,2})\/(\d{4})$/
const COUNT = /^\d{1,3}(?:,?\d{3})*$/

/**
 * KBank's KBiz account statement export, as the bank writes it: a title and
 * a block of declared figures (period, ending balance, number and total of
 * withdrawals and of deposits) above one transaction per row. Lines are
 * yielded as they are read; once the last row is read, the declared figures
 * are checked against the lines, so a file that lost or gained a line, or
 * whose figures were edited, throws before the import commits (nothing of it
 * is stored).
 */
export async function* kbizLines(
  rows: AsyncIterable<StatementRow>
): AsyncGenerator<ParsedStatementLine> {
  const declared: Partial<Declared> = {}
  const found = { withdrawals: { count: 0, total: 0 }, deposits: { count: 0, total: 0 } }
  // The ends of the file and the row after the first: enough to know its
  // time order without holding every line.
  let first: Balanced | undefined
  let second: Balanced | undefined
  let last: Balanced | undefined
  let rowNumber = 0
  let lastLineNumber = 0
  for await (const row of rows) {
    rowNumber++
    lastLineNumber = row.lineNumber
    if (rowNumber < ROW.firstLine) {
      readHeader(rowNumber, row, declared)
      continue
    }
    // A blank row carries no transaction.
    if (row.cells.every((text) => text === '')) continue
    const line = transaction(row, declared as Declared)
    const side = line.direction === 'credit' ? found.deposits : found.withdrawals
    side.count++
    side.total += line.amount
    if (!first) first = line
    else if (!second) second = line
    last = line
    yield line
  }
  if (rowNumber < ROW.deposits) {
    throw new StatementFormatError(
      `line ${lastLineNumber}: the file ends before its declared figures (rows ${ROW.period} to ${ROW.deposits}): not a whole KBiz statement`
    )
  }
  checkFigures(declared as Declared, found, timeOrder(first, second, last))
}

/** The title and the declared figures, each at its row and column. */
function readHeader(rowNumber: number, row: StatementRow, declared: Partial<Declared>) {
  switch (rowNumber) {
    case ROW.title: {
      const title = cell(row, COLUMN.title)
      if (!title.startsWith(KBIZ_TITLE)) {
        throw new StatementFormatError(
          `${at(row, COLUMN.title)}: "${title.slice(0, 60)}" is not a KBiz statement title (${KBIZ_TITLE}…)`
        )
      }
      return
    }
    case ROW.period:
      declared.period = period(row)
      return
    case ROW.ending:
      declared.ending = amount(row, COLUMN.figure, 'ending balance', { signed: true })
      return
    case ROW.withdrawals:
      declared.withdrawals = {
        count: count(row, 'number of withdrawals'),
        total: amount(row, COLUMN.figure, 'total of withdrawals'),
      }
      return
    case ROW.deposits:
      declared.deposits = {
        count: count(row, 'number of deposits'),
        total: amount(row, COLUMN.figure, 'total of deposits'),
      }
  }
}

function transaction(row: StatementRow, declared: Declared): Balanced {
  const { lineNumber, cells } = row
  if (cells.length < TRANSACTION_COLUMNS) {
    throw new StatementFormatError(
      `line ${lineNumber}: ${cells.length} columns, where a KBiz transaction row has ${TRANSACTION_COLUMNS}`
    )
  }
  const extra = cells.findIndex((text, index) => index >= TRANSACTION_COLUMNS && text !== '')
  if (extra !== -1) {
    throw new StatementFormatError(
      `${at(row, extra + 1)}: "${cells[extra]}" beyond the ${TRANSACTION_COLUMNS} columns of a KBiz transaction row`
    )
  }
  const withdrawal = cell(row, COLUMN.withdrawal)
  const deposit = cell(row, COLUMN.deposit)
  if (!!withdrawal === !!deposit) {
    throw new StatementFormatError(
      `line ${lineNumber}, columns ${COLUMN.withdrawal} (withdrawal) and ${COLUMN.deposit} (deposit): ` +
        (withdrawal
          ? `both are set ("${withdrawal}", "${deposit}"), where a row has exactly one`
          : 'neither is set, where a row has exactly one')
    )
  }
  const description = cell(row, COLUMN.description)
  const details = cell(row, COLUMN.details)
  const balance = cell(row, COLUMN.balance)
  if (balance === '') {
    throw new StatementFormatError(`${at(row, COLUMN.balance)}: no running balance`)
  }
  return {
    lineNumber,
    lineAt: lineTime(row, declared.period),
    direction: deposit ? 'credit' : 'debit',
    amount: amount(
      row,
      deposit ? COLUMN.deposit : COLUMN.withdrawal,
      deposit ? 'deposit' : 'withdrawal'
    ),
    reference: findReference(`${details} ${description}`),
    // The export has no transaction reference: the transfer is known by its running balance.
    transRef: null,
    balanceAfter: amount(row, COLUMN.balance, 'balance', { signed: true }),
    description: [description, details].filter(Boolean).join(' | ').slice(0, 255),
  }
}

/**
 * `dd/mm/yy` (Gregorian, 20yy) with `hh:mm` after it in the same cell or in
 * the next column, Bangkok time; the date must lie in the declared period.
 */
function lineTime(row: StatementRow, declaredPeriod: Declared['period']): Date {
  const text = cell(row, COLUMN.date)
  const date = DATE.exec(text)
  if (!date) {
    throw new StatementFormatError(
      `${at(row, COLUMN.date)}: "${text}" is not a date (dd/mm/yy, a time hh:mm may follow)`
    )
  }
  const [day, month, year] = [Number(date[1]), Number(date[2]), 2000 + Number(date[3])]
  let clock = date.slice(4, 7)
  const timeText = cell(row, COLUMN.time)
  if (timeText !== '') {
    const time = TIME.exec(timeText)
    if (!time) {
      throw new StatementFormatError(`${at(row, COLUMN.time)}: "${timeText}" is not a time (hh:mm)`)
    }
    if (date[4] !== undefined) {
      throw new StatementFormatError(
        `${at(row, COLUMN.time)}: a second time "${timeText}", where column ${COLUMN.date} has one`
      )
    }
    clock = time.slice(1, 4)
  }
  const [hour, minute, second] = clock.map((part) => Number(part ?? 0))
  const local = DateTime.fromObject(
    { year, month, day, hour, minute, second },
    { zone: GATEWAY_ZONE }
  )
  if (!local.isValid) {
    throw new StatementFormatError(`${at(row, COLUMN.date)}: "${text}" is not a date and time`)
  }
  const calendarDay = year * 10_000 + month * 100 + day
  if (calendarDay < declaredPeriod.from || calendarDay > declaredPeriod.to) {
    throw new StatementFormatError(
      `${at(row, COLUMN.date)}: the line is dated ${text}, outside the period the file declares ` +
        `(${declaredPeriod.text}): the file was edited, or is not the bank's`
    )
  }
  return local.toJSDate()
}

function period(row: StatementRow): Declared['period'] {
  const text = cell(row, COLUMN.period)
  const match = PERIOD.exec(text)
  const days =
    match &&
    [match.slice(1, 4), match.slice(4, 7)].map(([d, m, y]) => {
      const value = DateTime.fromObject({ year: +y, month: +m, day: +d }, { zone: GATEWAY_ZONE })
      return value.isValid ? +y * 10_000 + +m * 100 + +d : null
    })
  if (!days || days[0] === null || days[1] === null || days[0] > days[1]) {
    throw new StatementFormatError(
      `${at(row, COLUMN.period)}: "${text}" is not the statement's period (dd/mm/yyyy - dd/mm/yyyy)`
    )
  }
  return { from: days[0], to: days[1], text }
}

function count(row: StatementRow, figure: string) {
  const text = cell(row, COLUMN.count)
  if (!COUNT.test(text)) {
    throw new StatementFormatError(`${at(row, COLUMN.count)}: "${text}" is not the ${figure}`)
  }
  return Number(text.replaceAll(',', ''))
}

/** An amount cell → satang; the message names the cell. */
function amount(row: StatementRow, column: number, figure: string, options = { signed: false }) {
  const text = cell(row, column)
  try {
    const satang = parseStatementAmount(text, row.lineNumber)
    if (text.startsWith('-') && !options.signed) throw new StatementFormatError('negative')
    return text.startsWith('-') ? -satang : satang
  } catch (error) {
    if (!(error instanceof StatementFormatError)) throw error
    throw new StatementFormatError(`${at(row, column)}: "${text}" is not the ${figure} (an amount)`)
  }
}

function cell(row: StatementRow, column: number) {
  return row.cells[column - 1] ?? ''
}

function at(row: StatementRow, column: number) {
  return `line ${row.lineNumber}, column ${column}`
}

function signed(line: ParsedStatementLine) {
  return line.direction === 'credit' ? line.amount : -line.amount
}

/**
 * The file's earliest and latest lines. Banks write oldest first or newest
 * first: the times of the file's ends say which; lines all of one minute
 * are ordered by their balances, as BalanceChain orders them.
 */
export function timeOrder(first?: Balanced, second?: Balanced, last?: Balanced) {
  if (!first || !last) return undefined
  const span = last.lineAt.getTime() - first.lineAt.getTime()
  const oldestFirst =
    span !== 0 ? span > 0 : !second || first.balanceAfter + signed(second) === second.balanceAfter
  return oldestFirst ? { earliest: first, latest: last } : { earliest: last, latest: first }
}

function plural(howMany: number, noun: string) {
  return `${howMany} ${noun}${howMany === 1 ? '' : 's'}`
}

/** The lines against the figures the file declares: each refusal gives both. */
function checkFigures(
  declared: Declared,
  found: {
    withdrawals: { count: number; total: number }
    deposits: { count: number; total: number }
  },
  ends: { earliest: Balanced; latest: Balanced } | undefined
) {
  for (const [side, noun, row] of [
    ['deposits', 'deposit', ROW.deposits],
    ['withdrawals', 'withdrawal', ROW.withdrawals],
  ] as const) {
    const expected = declared[side]
    const actual = found[side]
    if (expected.count === actual.count && expected.total === actual.total) continue
    const why =
      actual.count < expected.count
        ? 'a line is missing'
        : actual.count > expected.count
          ? 'a line was added'
          : 'an amount was changed'
    throw new StatementFormatError(
      `line ${row}: the file declares ${plural(expected.count, noun)} totalling ${formatThb(expected.total)} THB; ` +
        `its lines have ${actual.count} totalling ${formatThb(actual.total)} THB: ${why}`
    )
  }
  const latest = ends?.latest.balanceAfter ?? declared.ending
  if (latest !== declared.ending) {
    throw new StatementFormatError(
      `line ${ROW.ending}, column ${COLUMN.figure}: the file declares an ending balance of ${formatThb(declared.ending)} THB; ` +
        `its latest line (line ${ends!.latest.lineNumber}) leaves ${formatThb(latest)} THB`
    )
  }
  const opening = declared.ending - declared.deposits.total + declared.withdrawals.total
  const chained = ends ? ends.earliest.balanceAfter - signed(ends.earliest) : opening
  if (chained !== opening) {
    throw new StatementFormatError(
      `line ${ends!.earliest.lineNumber}: the file declares an opening balance of ${formatThb(opening)} THB ` +
        `(ending ${formatThb(declared.ending)} − deposits ${formatThb(declared.deposits.total)} + ` +
        `withdrawals ${formatThb(declared.withdrawals.total)}); its earliest line opens at ${formatThb(chained)} THB`
    )
  }
}
