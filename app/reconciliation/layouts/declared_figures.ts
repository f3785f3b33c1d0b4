import { formatThb } from '#core/money'
import type { Balanced } from '#reconciliation/layouts/kbiz'
import type { Cell, SheetRow } from '#reconciliation/layouts/decode'
import {
  columnLetter,
  DECLARED_FIGURES,
  parseCellRef,
  type LayoutDefinition,
} from '#reconciliation/layouts/definition'
import { cellText, readAmount, readCount } from '#reconciliation/layouts/cells'

/**
 * The figures a file declares (line counts, totals, opening and closing
 * balance), for a layout operators define (defined_layout.ts): read from the
 * cells the layout names, at a row of the file or a number of rows after the
 * last line, and checked against what the file's lines add up to.
 */

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

type FigureField = keyof typeof DECLARED_FIGURES

export interface DeclaredCell {
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

/** Per side, the lines read and their satang. */
export interface LineTotals {
  deposit: { count: number; total: number }
  withdrawal: { count: number; total: number }
}

/** The cells the layout reads figures from (none when it names none). */
export function declaredCells(definition: LayoutDefinition): DeclaredCell[] {
  const declared: DeclaredCell[] = []
  for (const field of Object.keys(DECLARED_FIGURES) as FigureField[]) {
    const ref = definition[field]
    const parsed = ref ? parseCellRef(ref) : null
    if (parsed) declared.push({ field, ...parsed })
  }
  return declared
}

/** A row of the file: the cells read at that row take their value from it. */
export function readFixedCells(declared: DeclaredCell[], row: SheetRow) {
  for (const cell of declared) {
    if (!cell.afterLast && cell.row === row.row) {
      cell.cell = row.cells[cell.column - 1] ?? null
      cell.line = row.line
    }
  }
}

/** The table read: the cells `+k` rows after the last line, from the rows since it. */
export function readAfterLastCells(
  declared: DeclaredCell[],
  sinceLast: SheetRow[],
  lastLineRow: number
) {
  for (const cell of declared) {
    if (!cell.afterLast) continue
    const row = sinceLast.find((candidate) => candidate.row === lastLineRow + cell.row)
    cell.cell = row ? (row.cells[cell.column - 1] ?? null) : undefined
    cell.line = row?.line
  }
}

/**
 * Each declared figure against the lines: its cell missing or not a
 * figure, or the lines disagreeing, is a check that fails with its
 * refusal. `ends` is the earliest and latest line when every line prints
 * its balance.
 */
export function checkDeclaredFigures(
  definition: LayoutDefinition,
  declared: DeclaredCell[],
  found: LineTotals,
  ends: { earliest: Balanced; latest: Balanced } | undefined
): FigureCheck[] {
  const checks: FigureCheck[] = []
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
  return checks
}
