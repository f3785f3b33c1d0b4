import { StatementFormatError, type ParsedStatementLine } from '#reconciliation/statement_line'
import { timeOrder, type Balanced } from '#reconciliation/layouts/kbiz'
import { sheetRows, type SheetRow } from '#reconciliation/layouts/decode'
import type { LayoutDefinition } from '#reconciliation/layouts/definition'
import { cellText } from '#reconciliation/layouts/cells'
import {
  isEmptyRow,
  readLine,
  resolveColumns,
  type CellProblem,
  type Columns,
} from '#reconciliation/layouts/lines'
import {
  checkDeclaredFigures,
  declaredCells,
  readAfterLastCells,
  readFixedCells,
  type FigureCheck,
  type LineTotals,
} from '#reconciliation/layouts/declared_figures'

/**
 * The engine of the layouts operators define (docs/reconciliation.md,
 * "Layouts operators define"): one definition (definition.ts) read over a
 * file's rows (decode.ts). Every row of the table becomes a line or a
 * refusal naming each bad cell (line, column, why); once the last row is
 * read, the figures the file declares are checked against its lines. The
 * import stops at the first refusal (nothing of the file is stored); the
 * back-office preview (preview.ts) collects them all.
 *
 * Its parts: cells.ts and dates.ts (one cell: text, amounts, counts, dates
 * and times), lines.ts (rows to lines, refused cells), declared_figures.ts
 * (the figures the file declares, checked).
 */

export type LayoutEvent =
  | { kind: 'line'; line: ParsedStatementLine }
  | { kind: 'refused'; line: number; problems: CellProblem[] }
  | { kind: 'figures'; checks: FigureCheck[] }

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
  const declared = declaredCells(definition)
  const positional = !definition.header_row
  let columns: Columns | null = positional ? resolveColumns(definition, null) : null
  let ended = false
  const pending: SheetRow[] = []
  let pendingFilled = 0
  /** The rows since the last line: where `+k` cells are. */
  let sinceLast: SheetRow[] = []
  let lastLineRow = 0
  let lastRowLine = 0
  const found: LineTotals = { deposit: { count: 0, total: 0 }, withdrawal: { count: 0, total: 0 } }
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
    readFixedCells(declared, row)
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
  readAfterLastCells(declared, sinceLast, lastLineRow)
  const ends = allBalanced ? timeOrder(first, second, last) : undefined
  yield { kind: 'figures', checks: checkDeclaredFigures(definition, declared, found, ends) }
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
