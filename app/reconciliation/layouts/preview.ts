import { StatementFormatError } from '#reconciliation/statement_line'
import { formatThb } from '#core/money'
import type { LayoutDefinition } from '#reconciliation/layouts/definition'
import { GATEWAY_OFFSET_MS } from '#reconciliation/layouts/dates'
import type { CellProblem } from '#reconciliation/layouts/lines'
import type { FigureCheck } from '#reconciliation/layouts/declared_figures'
import { definedLayoutEvents } from '#reconciliation/layouts/defined_layout'

/**
 * The back-office's preview of a layout operators define, over a sample
 * file: every row, every refused cell and every declared figure, where the
 * import (definedLayoutLines) stops at the first.
 */

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
