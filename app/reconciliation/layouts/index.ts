import { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import { DateTime, Info, type Zone } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'
import {
  findReference,
  parseStatementAmount,
  parseStatementBalance,
  StatementFormatError,
  type ParsedStatementLine,
} from '#reconciliation/statement_line'
import { KBIZ_TITLE, kbizLines, type StatementRow } from '#reconciliation/layouts/kbiz'

/**
 * Statement file layouts (docs/reconciliation.md lists their columns). A
 * header layout names the columns a file must have and how one CSV record
 * becomes a line, or a StatementFormatError naming the bad line (an import is
 * all or nothing). `lineNumber` is the record's physical line in the file:
 * the header is line 1, so the first data line is line 2; empty lines count
 * too. A positional layout (kbiz) reads the file's rows by row and column
 * itself.
 */
interface HeaderLayout {
  name: string
  columns: string[]
  line(record: Record<string, string>, lineNumber: number): ParsedStatementLine
}

interface PositionalLayout {
  name: string
  rows(rows: AsyncIterable<StatementRow>): AsyncGenerator<ParsedStatementLine>
}

type Layout = HeaderLayout | PositionalLayout

export const LAYOUTS = {
  neutral: { name: 'neutral', columns: ['date_time', 'direction', 'amount'], line: neutralLine },
  kbank: {
    name: 'kbank',
    columns: ['date', 'time', 'description', 'withdrawal', 'deposit'],
    line: kbankLine,
  },
  kbiz: { name: 'kbiz', rows: kbizLines },
} as const satisfies Record<string, Layout>

export type StatementLayout = keyof typeof LAYOUTS

/** How much of the file's text the CSV parser gets at a time. */
const CHUNK_CHARS = 64 * 1024

function* chunks(text: string) {
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + CHUNK_CHARS, text.length)
    // Never between the two halves of a surrogate pair (an emoji): each
    // chunk is encoded to UTF-8 on its own.
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    yield text.slice(start, end)
    start = end
  }
}

/**
 * The file's lines one at a time, as the CSV parser streams them: memory
 * holds the part of the file being parsed, never every line.
 */
export async function* parseStatement(
  layout: StatementLayout,
  source: string | Readable
): AsyncGenerator<ParsedStatementLine> {
  for await (const lines of parseStatementBatches(layout, source)) yield* lines
}

/**
 * The same lines in the batches the CSV parser has ready (about a chunk of
 * the file each): one wait per batch instead of one per line, which an
 * import of a hundred thousand lines feels. A bad line ends its batch: the
 * lines before it come first, then its error, as they do one at a time.
 */
export async function* parseStatementBatches(
  layout: StatementLayout,
  source: string | Readable
): AsyncGenerator<ParsedStatementLine[]> {
  const definition: Layout = LAYOUTS[layout]
  const byPosition = 'rows' in definition
  const input = typeof source === 'string' ? Readable.from(chunks(source)) : source
  const parser = input.pipe(
    parse({
      bom: true,
      columns: byPosition
        ? false
        : (header: string[]) => header.map((name) => name.trim().toLowerCase()),
      // A positional layout counts rows as the bank wrote them, empty ones too.
      skip_empty_lines: !byPosition,
      trim: true,
      relax_column_count: true,
      // Each record with where the parser stands: the file's line it ends on.
      info: true,
    })
  )
  try {
    if (byPosition) {
      const records = parser[Symbol.asyncIterator]() as AsyncIterator<ParsedRecord>
      yield* inBatches(definition.rows(positionalRows(records)))
      return
    }
    let first = true
    for await (const records of recordBatches(parser)) {
      const lines: ParsedStatementLine[] = []
      try {
        for (const { record, info } of records as Array<ParsedRecord<Record<string, string>>>) {
          if (first) {
            requireColumns(record, definition)
            first = false
          }
          lines.push(definition.line(record, physicalLine(record, info.lines)))
        }
      } catch (error) {
        if (lines.length > 0) yield lines
        throw error
      }
      yield lines
    }
  } finally {
    // Stopped early (a bad line, or the caller gave up): stop reading too.
    parser.destroy()
    input.destroy()
  }
}

/**
 * Items in arrays of up to `size`; an error ends the last array, which
 * comes before it.
 */
export async function* inBatches<Item>(
  items: AsyncIterable<Item>,
  size = 1000
): AsyncGenerator<Item[]> {
  let batch: Item[] = []
  try {
    for await (const item of items) {
      batch.push(item)
      if (batch.length >= size) {
        yield batch
        batch = []
      }
    }
  } catch (error) {
    if (batch.length > 0) yield batch
    throw error
  }
  if (batch.length > 0) yield batch
}

/**
 * The parser's records as they are ready, in arrays, read from the stream
 * directly; as its async iterator would, a record left in it once it failed
 * is not read, and the failure is the file's (a CSV error).
 */
async function* recordBatches(parser: Readable): AsyncGenerator<ParsedRecord[]> {
  let ended = false
  let failure: Error | undefined
  let wake: (() => void) | undefined
  const onReadable = () => wake?.()
  const onEnd = () => {
    ended = true
    wake?.()
  }
  const onError = (error: Error) => {
    failure = error
    wake?.()
  }
  parser.on('readable', onReadable)
  parser.on('end', onEnd)
  parser.on('error', onError)
  try {
    for (;;) {
      const records: ParsedRecord[] = []
      for (let record; !parser.destroyed && (record = parser.read()) !== null;) {
        records.push(record)
      }
      if (records.length > 0) {
        yield records
        continue
      }
      // Destroyed by its failure: the error event may not have come yet.
      const error = failure ?? parser.errored
      if (error) throw new StatementFormatError(`not a CSV file: ${error.message}`)
      if (ended) return
      if (parser.destroyed) throw new StatementFormatError('not a CSV file: Premature close')
      await new Promise<void>((resolve) => (wake = resolve))
      wake = undefined
    }
  } finally {
    parser.off('readable', onReadable)
    parser.off('end', onEnd)
    parser.off('error', onError)
  }
}

interface ParsedRecord<Cells = string[] | Record<string, string>> {
  record: Cells
  info: { lines: number }
}

/** The parser's next record; a CSV error is the file's. */
async function nextRecord(records: AsyncIterator<ParsedRecord>) {
  try {
    return await records.next()
  } catch (error) {
    throw new StatementFormatError(`not a CSV file: ${(error as Error).message}`)
  }
}

/** Records as cells by position, each with the file's line it starts on. */
async function* positionalRows(records: AsyncIterator<ParsedRecord>): AsyncGenerator<StatementRow> {
  for (;;) {
    const next = await nextRecord(records)
    if (next.done) return
    const { record, info } = next.value as ParsedRecord<string[]>
    yield { cells: record, lineNumber: physicalLine(record, info.lines) }
  }
}

/**
 * The layout a file's own content names, when it names one: a KBiz export
 * opens with its title (after an optional BOM, perhaps quoted). Null for
 * anything else: the caller's default applies.
 */
export function detectLayout(content: string): StatementLayout | null {
  const start = content.charCodeAt(0) === 0xfeff ? 1 : 0
  const firstCell = content.slice(start, start + 256).replace(/^\s*"?\s*/, '')
  return firstCell.startsWith(KBIZ_TITLE) ? 'kbiz' : null
}

/**
 * The file's line a record starts on (1 = the header): the parser counts the
 * line it ends on, and a quoted value may hold line breaks of its own.
 */
function physicalLine(record: string[] | Record<string, string>, endLine: number) {
  let breaks = 0
  for (const value of Object.values(record)) {
    for (let at = value.indexOf('\n'); at !== -1; at = value.indexOf('\n', at + 1)) breaks++
  }
  return endLine - breaks
}

function requireColumns(record: Record<string, string>, layout: HeaderLayout) {
  const missing = layout.columns.filter((column) => !(column in record))
  if (missing.length > 0) {
    throw new StatementFormatError(`missing column(s) ${missing.join(', ')}`)
  }
}

/** `YYYY-MM-DD HH:mm[:ss]`, the neutral layout's usual time, read without Luxon's parser. */
const PLAIN_LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2}))?$/
/** Any zone Luxon accepts (GATEWAY_ZONE is a fixed offset, not an IANA name). */
const gatewayZone = Info.normalizeZone(GATEWAY_ZONE)
const NEAR_MS = 3 * 3_600_000

/**
 * A `YYYY-MM-DD HH:mm[:ss]` wall-clock time in the gateway's zone as the
 * instant Luxon would give (`DateTime.fromFormat` costs some 60 µs a line;
 * this, about 1 µs). Undefined for anything else, an impossible date or
 * time (31 April, 24:00), or a wall-clock time the zone skips or repeats:
 * those go to Luxon as before.
 */
export function plainLocalTime(text: string, zone: Zone = gatewayZone): Date | undefined {
  const match = PLAIN_LOCAL_TIME.exec(text)
  if (!match) return undefined
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  const hour = Number(match[4])
  const minute = Number(match[5])
  const second = Number(match[6] ?? 0)
  const wall = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(wall)
  if (
    year < 1000 ||
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second
  ) {
    return undefined
  }
  const offset = hourOffset(zone, wall)
  return offset === null ? undefined : new Date(wall - offset * 60_000)
}

/** Per zone: wall-clock hour (ms since the epoch as if UTC, ÷ 1 h) → its offset, or null near a change. */
const offsets = new WeakMap<Zone, Map<number, number | null>>()

/**
 * The zone's offset (minutes) for wall-clock times in the hour of `wall`,
 * or null when its offset changes (summer time, the zone's history) within
 * three hours of it: such times are left to Luxon. Asking the zone costs
 * some 15 µs, so the answer is kept per hour: every time of that hour is
 * within an hour of the instant checked, where the offset is the same.
 */
function hourOffset(zone: Zone, wall: number) {
  const hour = Math.floor(wall / 3_600_000)
  let ofZone = offsets.get(zone)
  if (!ofZone) offsets.set(zone, (ofZone = new Map()))
  let offset = ofZone.get(hour)
  if (offset === undefined) {
    const start = hour * 3_600_000
    const found = zone.offset(start)
    const instant = start - found * 60_000
    const steady = [instant, instant - NEAR_MS, instant + NEAR_MS].every(
      (near) => zone.offset(near) === found
    )
    offset = steady ? found : null
    if (ofZone.size >= 10_000) ofZone.clear()
    ofZone.set(hour, offset)
  }
  return offset
}

function localTime(text: string, formats: string[], lineNumber: number, column: string): Date {
  const plain = formats.includes('yyyy-LL-dd HH:mm') ? plainLocalTime(text.trim()) : undefined
  if (plain) return plain
  for (const format of formats) {
    const parsed = DateTime.fromFormat(text.trim(), format, { zone: GATEWAY_ZONE })
    if (parsed.isValid) return parsed.toJSDate()
  }
  const iso = DateTime.fromISO(text.trim(), { zone: GATEWAY_ZONE })
  if (iso.isValid) return iso.toJSDate()
  throw new StatementFormatError(
    `line ${lineNumber}, column ${column}: "${text}" is not a date and time`
  )
}

/**
 * The gateway's own layout:
 * `date_time,direction,amount,reference,description[,trans_ref][,balance]`
 * with date_time in GMT+7 (`YYYY-MM-DD HH:mm[:ss]` or ISO 8601 with an
 * offset), direction credit|debit, and the bank's transaction reference and
 * running balance when the bank's export has them.
 */
function neutralLine(record: Record<string, string>, lineNumber: number): ParsedStatementLine {
  const direction = record.direction?.toLowerCase()
  if (direction !== 'credit' && direction !== 'debit') {
    throw new StatementFormatError(
      `line ${lineNumber}, column direction: direction must be credit or debit`
    )
  }
  const description = record.description ?? ''
  const transRef = record.trans_ref?.trim()
  return {
    lineNumber,
    lineAt: localTime(
      record.date_time,
      ['yyyy-LL-dd HH:mm:ss', 'yyyy-LL-dd HH:mm'],
      lineNumber,
      'date_time'
    ),
    direction,
    amount: parseStatementAmount(record.amount, lineNumber, 'amount'),
    reference: record.reference?.trim()
      ? record.reference.trim().toUpperCase()
      : findReference(description),
    transRef: transRef ? transRef.toUpperCase().slice(0, 64) : null,
    balanceAfter: parseStatementBalance(record.balance, lineNumber, 'balance'),
    description: description.slice(0, 255),
  }
}

/**
 * KBank (Kasikornbank) account statement export:
 * `Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details` with
 * DD-MM-YY dates (20xx), HH:MM times in GMT+7 and amounts with thousands
 * separators; a line has either Withdrawal or Deposit.
 */
function kbankLine(record: Record<string, string>, lineNumber: number): ParsedStatementLine {
  const deposit = record.deposit?.trim()
  const withdrawal = record.withdrawal?.trim()
  if (!!deposit === !!withdrawal) {
    throw new StatementFormatError(
      `line ${lineNumber}, columns Withdrawal and Deposit: exactly one of them must be set`
    )
  }
  const description = [record.description, record.channel, record.details]
    .filter(Boolean)
    .join(' | ')
  return {
    lineNumber,
    lineAt: localTime(
      `${record.date} ${record.time || '00:00'}`,
      ['dd-LL-yy HH:mm', 'dd/LL/yy HH:mm'],
      lineNumber,
      'Date and Time'
    ),
    direction: deposit ? 'credit' : 'debit',
    amount: parseStatementAmount(
      deposit || withdrawal,
      lineNumber,
      deposit ? 'Deposit' : 'Withdrawal'
    ),
    reference: findReference(`${record.details ?? ''} ${record.description ?? ''}`),
    balanceAfter: parseStatementBalance(record.balance, lineNumber, 'Balance'),
    description: description.slice(0, 255),
  }
}
