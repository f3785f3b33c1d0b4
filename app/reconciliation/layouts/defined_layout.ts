import {
  findReference,
  StatementFormatError,
  type ParsedStatementLine,
} from '#reconciliation/statement_line'
import { formatThb } from '#core/money'
import { timeOrder, type Balanced } from '#reconciliation/layouts/kbiz'
import { sheetRows, type Cell, type SheetRow } from '#reconciliation/layouts/decode'
import {
  columnLetter,
  DECIMALS,
  DECLARED_FIGURES,
  formatTokens,
  parseCellRef,
  THOUSANDS,
  type ColumnRef,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'

/**
 * The engine of the layouts operators define (docs/reconciliation.md,
 * "Layouts operators define"): one definition (definition.ts) read over a
 * file's rows (decode.ts). Every row of the table becomes a line or a
 * refusal naming each bad cell (line, column, why); once the last row is
 * read, the figures the file declares are checked against its lines. The
 * import stops at the first refusal (nothing of the file is stored); the
 * back-office preview collects them all.
 */

/** One refused cell. */
export interface CellProblem {
  line: number
  /** `column 3 "Date" (C)`, or `column 3 (C)` without a header row. */
  column: string
  value: string
  why: string
  /** The whole message: `line 5, column 3 "Date" (C): "32/13/69" is not …`. */
  message: string
}

/** A declared figure against what the lines add up to. */
export interface FigureCheck {
  figure: string
  /** `line 8, column 13 (M)`. */
  at: string
  declared: string
  found: string
  ok: boolean
  /** The refusal when it disagrees. */
  message: string | null
}

export type LayoutEvent =
  | { kind: 'line'; line: ParsedStatementLine }
  | { kind: 'refused'; line: number; problems: CellProblem[] }
  | { kind: 'figures'; checks: FigureCheck[] }

const GATEWAY_OFFSET_MS = 7 * 3_600_000

const THAI_MONTHS_SHORT = [
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
const THAI_MONTHS_LONG = [
  'มกราคม',
  'กุมภาพันธ์',
  'มีนาคม',
  'เมษายน',
  'พฤษภาคม',
  'มิถุนายน',
  'กรกฎาคม',
  'สิงหาคม',
  'กันยายน',
  'ตุลาคม',
  'พฤศจิกายน',
  'ธันวาคม',
]
const ENGLISH_MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
]

/** A month name → 1..12: Thai (abbreviated with or without its dots, or in full) or English. */
function monthByName(text: string, thai: boolean): number | null {
  if (thai) {
    const bare = text.replace(/[.\s]/g, '')
    const short = THAI_MONTHS_SHORT.findIndex((name) => name.replaceAll('.', '') === bare)
    if (short !== -1) return short + 1
    const long = THAI_MONTHS_LONG.indexOf(bare)
    return long === -1 ? null : long + 1
  }
  const lower = text.toLowerCase().replace(/\.$/, '')
  const index = ENGLISH_MONTHS.findIndex(
    (name) => name === lower || (lower.length >= 3 && name.startsWith(lower) && lower.length <= 4)
  )
  return index === -1 ? null : index + 1
}

interface Parts {
  year?: number
  /** The year as written had two digits. */
  shortYear?: boolean
  month?: number
  day?: number
  hour?: number
  minute?: number
  second?: number
}

const compiled = new Map<string, { pattern: RegExp; fields: string[] }>()

function escapeRegex(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A date or time format (definition.ts tokens) as an anchored regular expression. */
function formatPattern(format: string) {
  let found = compiled.get(format)
  if (found) return found
  const fields: string[] = []
  let source = ''
  for (const part of formatTokens(format)) {
    if ('literal' in part) {
      source += /\s/.test(part.literal) ? '\\s+' : escapeRegex(part.literal)
      continue
    }
    fields.push(part.token)
    switch (part.token) {
      case 'TMMM':
      case 'TMMMM':
        source += '([\\u0E00-\\u0E7F.]+)'
        break
      case 'MMM':
      case 'MMMM':
        source += '([A-Za-z]+\\.?)'
        break
      case 'YYYY':
        source += '(\\d{4})'
        break
      case 'YY':
        source += '(\\d{2})'
        break
      default:
        source += '(\\d{1,2})'
    }
  }
  found = { pattern: new RegExp(`^${source}$`), fields }
  compiled.set(format, found)
  return found
}

/** The text read with the format: its parts, or null when it does not fit. */
export function readWithFormat(text: string, format: string): Parts | null {
  const { pattern, fields } = formatPattern(format)
  const match = pattern.exec(text.trim().replace(/\s+/g, ' '))
  if (!match) return null
  const parts: Parts = {}
  for (const [index, token] of fields.entries()) {
    const value = match[index + 1]
    switch (token) {
      case 'D':
      case 'DD':
        parts.day = Number(value)
        break
      case 'M':
      case 'MM':
        parts.month = Number(value)
        break
      case 'MMM':
      case 'MMMM':
      case 'TMMM':
      case 'TMMMM': {
        const month = monthByName(value, token.startsWith('T'))
        if (month === null) return null
        parts.month = month
        break
      }
      case 'YY':
        parts.year = Number(value)
        parts.shortYear = true
        break
      case 'YYYY':
        parts.year = Number(value)
        break
      case 'H':
      case 'HH':
        parts.hour = Number(value)
        break
      case 'mm':
        parts.minute = Number(value)
        break
      case 'ss':
        parts.second = Number(value)
    }
  }
  return parts
}

/**
 * The Gregorian year of a year as written: two digits are 20yy (CE) or
 * 25yy (BE: 69 is 2569); a Buddhist-era year is CE + 543. A year before
 * 1990 or after next year is refused, saying which era it looks like.
 */
export function gregorianYear(
  written: number,
  shortYear: boolean,
  era: 'ce' | 'be',
  latest = new Date().getUTCFullYear() + 1
) {
  const asCe = shortYear ? 2000 + written : written
  const asBe = (shortYear ? 2500 + written : written) - 543
  const year = era === 'be' ? asBe : asCe
  const plausible = (candidate: number) => candidate >= 1990 && candidate <= latest
  if (plausible(year)) return { year }
  const shown = shortYear ? String(written).padStart(2, '0') : String(written)
  if (era === 'ce' && plausible(asBe)) {
    return {
      error: `the year ${shown} is a Buddhist-era year (${asBe + 543} BE = ${asBe} CE): set the layout's era to BE`,
    }
  }
  if (era === 'be' && plausible(asCe)) {
    return { error: `the year ${shown} is a Gregorian year (${asCe}): set the layout's era to CE` }
  }
  return { error: `the year ${shown} (${year} CE) is not a statement's year` }
}

/** Wall-clock time in Bangkok (GMT+7) → the instant; null for an impossible date or time. */
export function bangkokInstant(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0
): Date | null {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(wall)
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second
  ) {
    return null
  }
  return new Date(wall - GATEWAY_OFFSET_MS)
}

/** Excel's day 0 (serial dates count days from it). */
const EXCEL_EPOCH = Date.UTC(1899, 11, 30)

/** A date Excel holds (exceljs: its wall clock as UTC), or a serial number of days. */
function wallClockOf(cell: Date | number) {
  const ms = cell instanceof Date ? cell.getTime() : EXCEL_EPOCH + Math.round(cell * 86_400) * 1000
  const at = new Date(Math.round(ms / 1000) * 1000)
  return {
    year: at.getUTCFullYear(),
    month: at.getUTCMonth() + 1,
    day: at.getUTCDate(),
    hour: at.getUTCHours(),
    minute: at.getUTCMinutes(),
    second: at.getUTCSeconds(),
  }
}

/** A cell as text: numbers as written, Excel dates as `YYYY-MM-DD HH:mm:ss` (wall clock). */
export function cellText(cell: Cell | undefined): string {
  if (cell === null || cell === undefined) return ''
  if (cell instanceof Date) return cell.toISOString().slice(0, 19).replace('T', ' ')
  return String(cell).trim()
}

const CURRENCY = /THB|฿|บาท/gi

/**
 * An amount as the layout writes it → signed satang, or the reason it is
 * not one. Numbers from XLSX cells must have at most 2 decimals; text uses
 * the layout's thousands separator and decimal mark, a leading minus (and,
 * when the layout says so, parentheses or a trailing minus) for negative;
 * `THB`, `฿` and `บาท` are dropped.
 */
export function readAmount(
  cell: Cell | undefined,
  definition: Pick<
    LayoutDefinition,
    'thousands' | 'decimal' | 'parentheses_negative' | 'trailing_minus'
  >
): { satang: number } | { error: string } | null {
  if (cell === null || cell === undefined) return null
  if (cell instanceof Date) return { error: 'is a date, not an amount' }
  if (typeof cell === 'number') {
    const satang = Math.round(cell * 100)
    if (
      !Number.isFinite(cell) ||
      Math.abs(cell * 100 - satang) > 1e-6 ||
      Math.abs(satang) >= 1e15
    ) {
      return { error: 'is not an amount with at most 2 decimals' }
    }
    return { satang }
  }
  let text = cell
    .replace(CURRENCY, '')
    .replace(/[\u00a0\u202f]/g, ' ')
    .trim()
  if (text === '') return null
  let negative = false
  const signs: string[] = []
  if (definition.parentheses_negative && /^\(.*\)$/.test(text)) {
    text = text.slice(1, -1).trim()
    signs.push('parentheses')
  }
  if (/^[-−]/.test(text)) {
    text = text.slice(1).trim()
    signs.push('minus')
  } else if (text.startsWith('+')) {
    text = text.slice(1).trim()
  }
  if (definition.trailing_minus && /[-−]$/.test(text)) {
    text = text.slice(0, -1).trim()
    signs.push('trailing minus')
  }
  if (signs.length > 1) return { error: `is negative twice (${signs.join(' and ')})` }
  negative = signs.length === 1
  const thousands = THOUSANDS[definition.thousands]
  const decimal = DECIMALS[definition.decimal]
  const dec = `(?:${escapeRegex(decimal)}(\\d{1,2}))?`
  const grouped = thousands
    ? new RegExp(`^(\\d{1,3}(?:${escapeRegex(thousands)}\\d{3})+)${dec}$`)
    : null
  const plain = new RegExp(`^(\\d{1,13})${dec}$`)
  const match = (grouped && grouped.exec(text)) ?? plain.exec(text)
  if (!match) {
    const convention = `thousands ${thousands ? `"${thousands}"` : 'none'}, decimal "${decimal}"`
    return {
      error: `is not an amount (${convention}${definition.parentheses_negative ? ', (negative)' : ''}${definition.trailing_minus ? ', trailing minus' : ''})`,
    }
  }
  const whole = thousands ? match[1].replaceAll(thousands, '') : match[1]
  if (whole.length > 13) return { error: 'is too large an amount' }
  const satang = Number(whole) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  return { satang: negative ? -satang : satang }
}

/** A count the file declares ("3", "1,204", or a number cell). */
function readCount(cell: Cell | undefined): number | null {
  if (typeof cell === 'number') return Number.isInteger(cell) && cell >= 0 ? cell : null
  const text = cellText(cell)
  return /^\d{1,3}(?:,?\d{3})*$/.test(text) ? Number(text.replaceAll(',', '')) : null
}

interface Column {
  /** 0-based. */
  index: number
  label: string
}

type Field =
  | 'date'
  | 'time'
  | 'description'
  | 'reference'
  | 'trans_ref'
  | 'amount'
  | 'direction'
  | 'withdrawal'
  | 'deposit'
  | 'balance'

interface Columns {
  one: Partial<Record<Field, Column>>
  details: Column[]
}

function normalName(name: unknown) {
  return cellText(name as Cell)
    .replace(/^\uFEFF/, '')
    .replace(/\s+/g, ' ')
    .toLowerCase()
}

function positionLabel(position: number, name?: string) {
  return `column ${position}${name ? ` "${name}"` : ''} (${columnLetter(position)})`
}

const FIELD_REFS: Array<[Field, keyof LayoutDefinition]> = [
  ['date', 'date_column'],
  ['time', 'time_column'],
  ['description', 'description_column'],
  ['reference', 'reference_column'],
  ['trans_ref', 'trans_ref_column'],
  ['amount', 'amount_column'],
  ['direction', 'direction_column'],
  ['withdrawal', 'withdrawal_column'],
  ['deposit', 'deposit_column'],
  ['balance', 'balance_column'],
]

/** The columns the layout names, found in the header row (or by position). */
function resolveColumns(definition: LayoutDefinition, header: SheetRow | null): Columns {
  const names = header ? header.cells.map((name) => cellText(name).replace(/^\uFEFF/, '')) : []
  const find = (ref: ColumnRef, field: string): Column => {
    if (typeof ref === 'number') {
      return { index: ref - 1, label: positionLabel(ref, names[ref - 1] || undefined) }
    }
    const index = names.findIndex((name) => normalName(name) === normalName(ref))
    if (index === -1) {
      throw new StatementFormatError(
        `line ${header?.line ?? 1}: the header row has no column "${ref}" (the layout's ${field}); its columns: ${names
          .filter(Boolean)
          .map((name) => `"${name}"`)
          .join(', ')}`
      )
    }
    return { index, label: positionLabel(index + 1, names[index]) }
  }
  const one: Columns['one'] = {}
  for (const [field, option] of FIELD_REFS) {
    const ref = definition[option] as ColumnRef | null
    if (ref !== null) one[field] = find(ref, option)
  }
  return { one, details: definition.details_columns.map((ref) => find(ref, 'details_columns')) }
}

function isEmptyRow(row: SheetRow) {
  return row.cells.every((cell) => cellText(cell) === '')
}

/** One row of the table → a line, or every bad cell of it. */
function readLine(
  row: SheetRow,
  columns: Columns,
  definition: LayoutDefinition
): ParsedStatementLine | CellProblem[] {
  const problems: CellProblem[] = []
  const refuse = (column: Column, cell: Cell | undefined, why: string) => {
    const value = cellText(cell)
    const shown = value === '' ? 'empty' : `"${value.slice(0, 60)}"`
    problems.push({
      line: row.line,
      column: column.label,
      value,
      why,
      message: `line ${row.line}, ${column.label}: ${shown} ${why}`,
    })
  }
  const cellOf = (column: Column | undefined) => (column ? row.cells[column.index] : undefined)
  const textOf = (column: Column | undefined) => cellText(cellOf(column))

  // When: the date (perhaps with its time), the time column.
  let lineAt: Date | null = null
  const dateColumn = columns.one.date!
  const dateCell = cellOf(dateColumn)
  let parts: Parts | null = null
  let dateFromExcel = false
  if (dateCell instanceof Date || typeof dateCell === 'number') {
    parts = wallClockOf(dateCell)
    dateFromExcel = true
  } else if (textOf(dateColumn) === '') {
    refuse(dateColumn, dateCell, `is not a date (${definition.date_format}): the line has no date`)
  } else {
    const read = readWithFormat(textOf(dateColumn), definition.date_format)
    if (!read) {
      refuse(dateColumn, dateCell, `is not a date (${definition.date_format})`)
    } else {
      const year = gregorianYear(read.year!, read.shortYear ?? false, definition.era)
      if ('error' in year) refuse(dateColumn, dateCell, `is not a date: ${year.error}`)
      else parts = { ...read, year: year.year }
    }
  }
  const timeColumn = columns.one.time
  if (parts && timeColumn) {
    const timeCell = cellOf(timeColumn)
    if (timeCell instanceof Date || typeof timeCell === 'number') {
      const clock = wallClockOf(timeCell)
      parts = { ...parts, hour: clock.hour, minute: clock.minute, second: clock.second }
    } else if (textOf(timeColumn) === '') {
      // No time: an Excel date keeps its own, a text date is 00:00.
      parts = {
        ...parts,
        hour: parts.hour ?? 0,
        minute: parts.minute ?? 0,
        second: parts.second ?? 0,
      }
    } else {
      const time = readWithFormat(textOf(timeColumn), definition.time_format ?? 'HH:mm')
      if (!time) refuse(timeColumn, timeCell, `is not a time (${definition.time_format})`)
      else parts = { ...parts, hour: time.hour, minute: time.minute, second: time.second ?? 0 }
    }
  } else if (parts && !dateFromExcel && parts.hour === undefined) {
    parts = { ...parts, hour: 0, minute: 0, second: 0 }
  }
  if (parts && problems.length === 0) {
    lineAt = bangkokInstant(
      parts.year!,
      parts.month!,
      parts.day!,
      parts.hour ?? 0,
      parts.minute ?? 0,
      parts.second ?? 0
    )
    if (!lineAt) refuse(dateColumn, dateCell, 'is not a date and time that exists')
  }

  // How much, which way.
  let direction: 'credit' | 'debit' | null = null
  let amount: number | null = null
  const money = (column: Column) => {
    const read = readAmount(cellOf(column), definition)
    if (read && 'error' in read) {
      refuse(column, cellOf(column), read.error)
      return undefined
    }
    return read?.satang ?? null
  }
  if (definition.amount_mode === 'signed') {
    const column = columns.one.amount!
    const value = money(column)
    if (value === null || value === 0)
      refuse(column, cellOf(column), 'is not an amount: the line moves no money')
    else if (value !== undefined) {
      direction = value < 0 ? 'debit' : 'credit'
      amount = Math.abs(value)
    }
  } else if (definition.amount_mode === 'split') {
    const out = columns.one.withdrawal!
    const into = columns.one.deposit!
    const withdrawal = money(out)
    const deposit = money(into)
    if (withdrawal !== undefined && deposit !== undefined) {
      const hasOut = withdrawal !== null && withdrawal !== 0
      const hasIn = deposit !== null && deposit !== 0
      if (hasOut === hasIn) {
        const label = `${out.label} (withdrawal) and ${into.label} (deposit)`
        const why = hasOut
          ? `both are set ("${textOf(out)}", "${textOf(into)}"), where a line has exactly one`
          : 'neither is set, where a line has exactly one'
        problems.push({
          line: row.line,
          column: label,
          value: `${textOf(out)} | ${textOf(into)}`,
          why,
          message: `line ${row.line}, ${label}: ${why}`,
        })
      } else {
        direction = hasIn ? 'credit' : 'debit'
        amount = Math.abs((hasIn ? deposit : withdrawal)!)
      }
    }
  } else {
    const column = columns.one.amount!
    const value = money(column)
    if (value === null || value === 0)
      refuse(column, cellOf(column), 'is not an amount: the line moves no money')
    else if (value !== undefined) amount = Math.abs(value)
    const which = columns.one.direction!
    const word = textOf(which).toLowerCase()
    const credit = definition.credit_words.some((candidate) => candidate.toLowerCase() === word)
    const debit = definition.debit_words.some((candidate) => candidate.toLowerCase() === word)
    if (credit) direction = 'credit'
    else if (debit) direction = 'debit'
    else {
      refuse(
        which,
        cellOf(which),
        `is not a direction: money in is ${definition.credit_words.map((w) => `"${w}"`).join(', ')}; money out is ${definition.debit_words.map((w) => `"${w}"`).join(', ')}`
      )
    }
  }

  let balanceAfter: number | null = null
  if (columns.one.balance) {
    const value = money(columns.one.balance)
    balanceAfter = value ?? null
  }

  if (problems.length > 0) return problems
  const description = textOf(columns.one.description)
  const details = columns.details.map((column) => textOf(column)).filter(Boolean)
  const reference = textOf(columns.one.reference)
  const transRef = textOf(columns.one.trans_ref)
  return {
    lineNumber: row.line,
    lineAt: lineAt!,
    direction: direction!,
    amount: amount!,
    reference: reference
      ? reference.toUpperCase().slice(0, 64)
      : findReference(`${details.join(' ')} ${description}`),
    transRef: transRef ? transRef.toUpperCase().slice(0, 64) : null,
    balanceAfter,
    description: [description, ...details].filter(Boolean).join(' | ').slice(0, 255),
  }
}

type FigureField = keyof typeof DECLARED_FIGURES

interface DeclaredCell {
  field: FigureField
  afterLast: boolean
  row: number
  column: number
  cell?: Cell
  line?: number
}

function plural(count: number, noun: string) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/**
 * The file read with the layout, row by row: a line, or a row's refused
 * cells, then the declared figures checked. A file that cannot be read at
 * all (not its encoding, no such sheet, a header column missing) throws a
 * StatementFormatError.
 */
export async function* definedLayoutEvents(
  definition: LayoutDefinition,
  bytes: Buffer
): AsyncGenerator<LayoutEvent> {
  const declared: DeclaredCell[] = []
  for (const field of Object.keys(DECLARED_FIGURES) as FigureField[]) {
    const ref = definition[field]
    const parsed = ref ? parseCellRef(ref) : null
    if (parsed) declared.push({ field, ...parsed })
  }
  const positional = !definition.header_row
  let columns: Columns | null = positional ? resolveColumns(definition, null) : null
  let ended = false
  const pending: SheetRow[] = []
  let pendingFilled = 0
  /** The rows since the last line: where `+k` cells are. */
  let sinceLast: SheetRow[] = []
  let lastLineRow = 0
  let lastRowLine = 0
  const found = { deposit: { count: 0, total: 0 }, withdrawal: { count: 0, total: 0 } }
  let allBalanced = true
  let first: Balanced | undefined
  let second: Balanced | undefined
  let last: Balanced | undefined

  function* process(row: SheetRow): Generator<LayoutEvent> {
    if (isEmptyRow(row)) {
      sinceLast.push(row)
      return
    }
    const read = readLine(row, columns!, definition)
    sinceLast = []
    lastLineRow = row.row
    if (Array.isArray(read)) {
      yield { kind: 'refused', line: row.line, problems: read }
      return
    }
    const side = read.direction === 'credit' ? found.deposit : found.withdrawal
    side.count++
    side.total += read.amount
    if (read.balanceAfter === null || read.balanceAfter === undefined) allBalanced = false
    else {
      const balanced = read as Balanced
      if (!first) first = balanced
      else if (!second) second = balanced
      last = balanced
    }
    yield { kind: 'line', line: read }
  }

  for await (const row of sheetRows(bytes, definition)) {
    lastRowLine = row.line
    for (const cell of declared) {
      if (!cell.afterLast && cell.row === row.row) {
        cell.cell = row.cells[cell.column - 1] ?? null
        cell.line = row.line
      }
    }
    if (row.row <= definition.skip_rows) continue
    if (ended) {
      sinceLast.push(row)
      continue
    }
    if (!columns) {
      if (isEmptyRow(row)) continue
      columns = resolveColumns(definition, row)
      continue
    }
    const firstCell = cellText(row.cells[0]).toLowerCase()
    if (definition.stop_at && firstCell.startsWith(definition.stop_at.toLowerCase())) {
      // The table ends here: flush the rows held back, then this row is after the last line.
      for (const held of pending.splice(0)) yield* process(held)
      ended = true
      sinceLast.push(row)
      continue
    }
    if (definition.footer_rows === 0) {
      yield* process(row)
      continue
    }
    // Hold back the last footer_rows rows with something in them: they are not lines.
    pending.push(row)
    if (!isEmptyRow(row)) pendingFilled++
    while (pendingFilled > definition.footer_rows) {
      const next = pending.shift()!
      if (!isEmptyRow(next)) pendingFilled--
      yield* process(next)
    }
  }
  if (!columns) {
    throw new StatementFormatError(
      `line ${lastRowLine || 1}: the file ends before its header row (after ${definition.skip_rows} rows skipped)`
    )
  }
  sinceLast.push(...pending)

  // The declared figures, against the lines.
  for (const cell of declared) {
    if (!cell.afterLast) continue
    const row = sinceLast.find((candidate) => candidate.row === lastLineRow + cell.row)
    cell.cell = row ? (row.cells[cell.column - 1] ?? null) : undefined
    cell.line = row?.line
  }
  const checks: FigureCheck[] = []
  const ends = allBalanced ? timeOrder(first, second, last) : undefined
  const byField = new Map(declared.map((cell) => [cell.field, cell]))
  const values = new Map<FigureField, number>()
  for (const cell of declared) {
    const figure = DECLARED_FIGURES[cell.field]
    const at =
      cell.line === undefined
        ? `${cell.afterLast ? `row ${cell.row} after the last line` : `row ${cell.row}`}, column ${cell.column} (${columnLetter(cell.column)})`
        : `line ${cell.line}, column ${cell.column} (${columnLetter(cell.column)})`
    if (cell.cell === undefined) {
      checks.push({
        figure,
        at,
        declared: '',
        found: '',
        ok: false,
        message: `${at}: the file ends before the ${figure} the layout reads there`,
      })
      continue
    }
    const isCount = cell.field.endsWith('_count_cell')
    const value = isCount ? readCount(cell.cell) : readAmount(cell.cell, definition)
    const number =
      typeof value === 'number' ? value : value && 'satang' in value ? value.satang : null
    if (number === null) {
      checks.push({
        figure,
        at,
        declared: cellText(cell.cell),
        found: '',
        ok: false,
        message: `${at}: "${cellText(cell.cell)}" is not the ${figure} (${isCount ? 'a whole number' : 'an amount'})`,
      })
      continue
    }
    values.set(cell.field, number)
  }
  const atOf = (field: FigureField) => {
    const cell = byField.get(field)!
    return `line ${cell.line}, column ${cell.column} (${columnLetter(cell.column)})`
  }
  for (const [side, noun] of [
    ['deposit', 'deposit'],
    ['withdrawal', 'withdrawal'],
  ] as const) {
    const actual = found[side]
    const countField = `${side}s_count_cell` as FigureField
    const totalField = `${side}s_total_cell` as FigureField
    const count = values.get(countField)
    if (count !== undefined) {
      const ok = count === actual.count
      checks.push({
        figure: DECLARED_FIGURES[countField],
        at: atOf(countField),
        declared: String(count),
        found: String(actual.count),
        ok,
        message: ok
          ? null
          : `${atOf(countField)}: the file declares ${plural(count, noun)}; its lines have ${actual.count}: ${actual.count < count ? 'a line is missing' : 'a line was added'}`,
      })
    }
    const total = values.get(totalField)
    if (total !== undefined) {
      const ok = total === actual.total
      checks.push({
        figure: DECLARED_FIGURES[totalField],
        at: atOf(totalField),
        declared: formatThb(total),
        found: formatThb(actual.total),
        ok,
        message: ok
          ? null
          : `${atOf(totalField)}: the file declares ${noun}s totalling ${formatThb(total)} THB; its lines have ${plural(actual.count, noun)} totalling ${formatThb(actual.total)} THB: ${count !== undefined && count !== actual.count ? (actual.count < count ? 'a line is missing' : 'a line was added') : 'a line is missing or was added, or an amount was changed'}`,
      })
    }
  }
  const movement = found.deposit.total - found.withdrawal.total
  const opening = values.get('opening_balance_cell')
  const closing = values.get('closing_balance_cell')
  if (closing !== undefined) {
    const foundClosing = ends
      ? ends.latest.balanceAfter
      : opening !== undefined
        ? opening + movement
        : null
    if (foundClosing !== null) {
      const ok = foundClosing === closing
      const how = ends
        ? `its latest line (line ${ends.latest.lineNumber}) leaves ${formatThb(foundClosing)} THB`
        : `the opening balance and its lines make ${formatThb(foundClosing)} THB`
      checks.push({
        figure: 'closing balance',
        at: atOf('closing_balance_cell'),
        declared: formatThb(closing),
        found: formatThb(foundClosing),
        ok,
        message: ok
          ? null
          : `${atOf('closing_balance_cell')}: the file declares a closing balance of ${formatThb(closing)} THB; ${how}`,
      })
    }
  }
  if (opening !== undefined && ends) {
    const signedAmount =
      ends.earliest.direction === 'credit' ? ends.earliest.amount : -ends.earliest.amount
    const foundOpening = ends.earliest.balanceAfter - signedAmount
    const ok = foundOpening === opening
    checks.push({
      figure: 'opening balance',
      at: atOf('opening_balance_cell'),
      declared: formatThb(opening),
      found: formatThb(foundOpening),
      ok,
      message: ok
        ? null
        : `${atOf('opening_balance_cell')}: the file declares an opening balance of ${formatThb(opening)} THB; its earliest line (line ${ends.earliest.lineNumber}) opens at ${formatThb(foundOpening)} THB`,
    })
  }
  yield { kind: 'figures', checks }
}

/**
 * The file's lines for an import: the first refused cell, or the first
 * declared figure the lines disagree with, throws (nothing is imported).
 */
export async function* definedLayoutLines(
  definition: LayoutDefinition,
  bytes: Buffer
): AsyncGenerator<ParsedStatementLine> {
  for await (const event of definedLayoutEvents(definition, bytes)) {
    if (event.kind === 'line') yield event.line
    else if (event.kind === 'refused') throw new StatementFormatError(event.problems[0].message)
    else {
      const failed = event.checks.find((check) => !check.ok)
      if (failed) throw new StatementFormatError(failed.message!)
    }
  }
}

export interface PreviewRow {
  line: number
  ok: boolean
  /** Bangkok time, `YYYY-MM-DD HH:mm:ss`. */
  when: string
  direction: string
  amount: string
  balance: string
  reference: string
  transRef: string
  description: string
  problems: CellProblem[]
}

export interface LayoutPreview {
  /** The file could not be read at all (encoding, sheet, header). */
  fileError: string | null
  rows: PreviewRow[]
  /** Rows beyond the ones shown. */
  more: number
  lines: number
  refused: number
  problems: CellProblem[]
  credits: { count: number; total: string }
  debits: { count: number; total: string }
  figures: FigureCheck[]
  /** Would the import take the file (no refusal, every figure agreeing)? */
  importable: boolean
}

function bangkokText(instant: Date) {
  return new Date(instant.getTime() + GATEWAY_OFFSET_MS)
    .toISOString()
    .slice(0, 19)
    .replace('T', ' ')
}

/** The sample file read with the layout, every row and every refused cell, for the editor. */
export async function previewDefinedLayout(
  definition: LayoutDefinition,
  bytes: Buffer,
  shown = 300
): Promise<LayoutPreview> {
  const preview: LayoutPreview = {
    fileError: null,
    rows: [],
    more: 0,
    lines: 0,
    refused: 0,
    problems: [],
    credits: { count: 0, total: '0.00' },
    debits: { count: 0, total: '0.00' },
    figures: [],
    importable: false,
  }
  const totals = { credit: 0, debit: 0 }
  const add = (row: PreviewRow) => {
    if (preview.rows.length < shown) preview.rows.push(row)
    else preview.more++
  }
  try {
    for await (const event of definedLayoutEvents(definition, bytes)) {
      if (event.kind === 'line') {
        const line = event.line
        preview.lines++
        totals[line.direction] += line.amount
        preview[line.direction === 'credit' ? 'credits' : 'debits'].count++
        add({
          line: line.lineNumber,
          ok: true,
          when: bangkokText(line.lineAt),
          direction: line.direction,
          amount: formatThb(line.amount),
          balance:
            line.balanceAfter === null || line.balanceAfter === undefined
              ? ''
              : formatThb(line.balanceAfter),
          reference: line.reference ?? '',
          transRef: line.transRef ?? '',
          description: line.description,
          problems: [],
        })
      } else if (event.kind === 'refused') {
        preview.refused++
        if (preview.problems.length < 500) preview.problems.push(...event.problems)
        add({
          line: event.line,
          ok: false,
          when: '',
          direction: '',
          amount: '',
          balance: '',
          reference: '',
          transRef: '',
          description: '',
          problems: event.problems,
        })
      } else {
        preview.figures = event.checks
      }
    }
  } catch (error) {
    if (!(error instanceof StatementFormatError)) throw error
    preview.fileError = error.message
  }
  preview.credits.total = formatThb(totals.credit)
  preview.debits.total = formatThb(totals.debit)
  preview.importable =
    preview.fileError === null &&
    preview.refused === 0 &&
    preview.figures.every((check) => check.ok)
  return preview
}
