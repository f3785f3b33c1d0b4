import { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import iconv from 'iconv-lite'
import ExcelJS from 'exceljs'
import { StatementFormatError } from '#reconciliation/statement_line'
import { DELIMITERS, type LayoutDefinition } from '#reconciliation/layouts/definition'

/**
 * A file's bytes as rows of cells, for the defined layouts' engine
 * (defined_layout.ts): CSV in the layout's encoding and delimiter, or an
 * XLSX sheet (exceljs). A cell is text, or for XLSX what the cell holds: a
 * number, or a date (exceljs gives the wall-clock time Excel shows as a
 * UTC instant).
 */
export type Cell = string | number | Date | null

export interface SheetRow {
  cells: Cell[]
  /** The row counted from 1, empty rows included: what a declared figure's cell names. */
  row: number
  /** Where the row starts: the CSV file's line, or the XLSX sheet's row. */
  line: number
}

/** The encoding a byte order mark names, and the mark's length. */
function byteOrderMark(bytes: Buffer) {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return { encoding: 'utf8', skip: 3 }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf16le', skip: 2 }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf16be', skip: 2 }
  return null
}

/**
 * The file's text. A byte order mark decides (UTF-8, UTF-16 LE as Excel's
 * "Unicode text" writes it, UTF-16 BE); without one, the layout's encoding.
 * Bytes that are not text in that encoding refuse the file, naming where.
 */
export function decodeText(bytes: Buffer, encoding: LayoutDefinition['encoding']): string {
  const mark = byteOrderMark(bytes)
  const used = mark?.encoding ?? (encoding === 'utf8-bom' ? 'utf8' : encoding)
  const body = mark ? bytes.subarray(mark.skip) : bytes
  if (used === 'utf8') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(body)
    } catch {
      const at = firstInvalidUtf8(body)
      throw new StatementFormatError(
        `line ${lineAt(body, at)}: byte ${at + 1} of the file is not UTF-8 text: the file may be windows-874 or UTF-16 (set the layout's encoding)`
      )
    }
  }
  if (used === 'utf16le' || used === 'utf16be') {
    if (body.length % 2 !== 0) {
      throw new StatementFormatError(
        `the file has an odd number of bytes (${body.length}): it is not UTF-16 text`
      )
    }
    return iconv.decode(body, used === 'utf16le' ? 'utf-16le' : 'utf-16be')
  }
  return iconv.decode(body, 'windows-874')
}

/** The offset of the first byte that does not start or continue a UTF-8 character. */
function firstInvalidUtf8(bytes: Buffer) {
  for (let at = 0; at < bytes.length;) {
    const lead = bytes[at]
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead < 0xe0
          ? 2
          : lead >= 0xe0 && lead < 0xf0
            ? 3
            : lead >= 0xf0 && lead < 0xf5
              ? 4
              : 0
    if (length === 0) return at
    for (let next = 1; next < length; next++) {
      if (at + next >= bytes.length || (bytes[at + next] & 0xc0) !== 0x80) return at
    }
    at += length
  }
  return bytes.length
}

function lineAt(bytes: Buffer, offset: number) {
  let line = 1
  for (let at = 0; at < offset; at++) if (bytes[at] === 0x0a) line++
  return line
}

const CHUNK_CHARS = 64 * 1024

function* chunks(text: string) {
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + CHUNK_CHARS, text.length)
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    yield text.slice(start, end)
    start = end
  }
}

/** CSV text as rows, streamed: the file's line each starts on, empty rows kept (they count). */
async function* csvRows(text: string, definition: LayoutDefinition): AsyncGenerator<SheetRow> {
  const input = Readable.from(chunks(text))
  const parser = input.pipe(
    parse({
      delimiter: DELIMITERS[definition.delimiter],
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      info: true,
    })
  )
  let row = 0
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[]
      info: { lines: number }
    }>) {
      row++
      let breaks = 0
      for (const value of record) breaks += value.split('\n').length - 1
      yield { cells: record, row, line: info.lines - breaks }
    }
  } catch (error) {
    if (error instanceof StatementFormatError) throw error
    throw new StatementFormatError(`not a CSV file: ${(error as Error).message}`)
  } finally {
    parser.destroy()
    input.destroy()
  }
}

/** What an XLSX cell holds, as a value: formulas by their result, rich text as its text. */
function xlsxValue(value: ExcelJS.CellValue): Cell {
  if (value === null || value === undefined) return null
  if (typeof value === 'string' || typeof value === 'number' || value instanceof Date) return value
  if (typeof value === 'boolean') return String(value)
  if (typeof value === 'object') {
    if ('richText' in value) return value.richText.map((part) => part.text).join('')
    if ('text' in value && typeof value.text === 'string') return value.text
    if ('result' in value) {
      const result = (value as { result?: unknown }).result
      if (result === undefined || result === null) return null
      if (typeof result === 'object' && !(result instanceof Date)) return null
      return result as Cell
    }
    if ('error' in value) return String(value.error)
  }
  return String(value)
}

/** The layout's sheet of an XLSX workbook, its rows from the first (empty ones included). */
async function* xlsxRows(bytes: Buffer, definition: LayoutDefinition): AsyncGenerator<SheetRow> {
  const workbook = new ExcelJS.Workbook()
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer)
  } catch (error) {
    throw new StatementFormatError(`not an XLSX workbook: ${(error as Error).message}`)
  }
  const sheets = workbook.worksheets
  const wanted = definition.sheet
  const sheet = !wanted
    ? sheets[0]
    : /^\d+$/.test(wanted)
      ? sheets[Number(wanted) - 1]
      : sheets.find((candidate) => candidate.name.trim() === wanted.trim())
  if (!sheet) {
    throw new StatementFormatError(
      `the workbook has no sheet ${wanted ? `"${wanted}"` : ''} (its sheets: ${sheets.map((s) => `"${s.name}"`).join(', ') || 'none'})`
    )
  }
  for (let number = 1; number <= sheet.rowCount; number++) {
    const row = sheet.getRow(number)
    const cells: Cell[] = []
    for (let column = 1; column <= row.cellCount; column++) {
      cells.push(xlsxValue(row.getCell(column).value))
    }
    yield { cells, row: number, line: number }
  }
}

/** The file's rows as the layout reads it. */
export function sheetRows(bytes: Buffer, definition: LayoutDefinition): AsyncGenerator<SheetRow> {
  if (definition.format === 'xlsx') return xlsxRows(bytes, definition)
  return csvRows(decodeText(bytes, definition.encoding), definition)
}
