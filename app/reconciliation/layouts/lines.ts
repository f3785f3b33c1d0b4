import {
  findReference,
  StatementFormatError,
  type ParsedStatementLine,
} from '#reconciliation/statement_line'
import type { Cell, SheetRow } from '#reconciliation/layouts/decode'
import {
  columnLetter,
  type ColumnRef,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'
import { cellText, readAmount } from '#reconciliation/layouts/cells'
import {
  bangkokInstant,
  gregorianYear,
  readWithFormat,
  wallClockOf,
  type Parts,
} from '#reconciliation/layouts/dates'

/**
 * Rows to lines, for a layout operators define (defined_layout.ts): the
 * columns the layout names, found in the header row or by position, and one
 * row of the table read into a statement line, or refused with every bad
 * cell named (line, column, why).
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

export interface Columns {
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
export function resolveColumns(definition: LayoutDefinition, header: SheetRow | null): Columns {
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

export function isEmptyRow(row: SheetRow) {
  return row.cells.every((cell) => cellText(cell) === '')
}

/** One row of the table → a line, or every bad cell of it. */
export function readLine(
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
