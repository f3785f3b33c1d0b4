import { parse } from 'csv-parse/sync'
import { DateTime } from 'luxon'
import { GATEWAY_ZONE } from '#core/clock'
import {
  findReference,
  parseStatementAmount,
  StatementFormatError,
  type ParsedStatementLine,
} from '#reconciliation/statement_line'

/**
 * Statement file layouts (docs/reconciliation.md lists their columns). Each
 * turns the file's text into lines or throws StatementFormatError naming the
 * first bad line: an import is all or nothing.
 */
export const LAYOUTS = {
  neutral: parseNeutral,
  kbank: parseKbank,
} as const

export type StatementLayout = keyof typeof LAYOUTS

function rows(text: string): Record<string, string>[] {
  try {
    return parse(text.replace(/^\uFEFF/, ''), {
      columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
    })
  } catch (error) {
    throw new StatementFormatError(`not a CSV file: ${(error as Error).message}`)
  }
}

function requireColumns(records: Record<string, string>[], columns: string[], layout: string) {
  if (records.length === 0) return
  const missing = columns.filter((column) => !(column in records[0]))
  if (missing.length > 0) {
    throw new StatementFormatError(`${layout} layout: missing column(s) ${missing.join(', ')}`)
  }
}

function localTime(text: string, formats: string[], lineNumber: number): Date {
  for (const format of formats) {
    const parsed = DateTime.fromFormat(text.trim(), format, { zone: GATEWAY_ZONE })
    if (parsed.isValid) return parsed.toJSDate()
  }
  const iso = DateTime.fromISO(text.trim(), { zone: GATEWAY_ZONE })
  if (iso.isValid) return iso.toJSDate()
  throw new StatementFormatError(`line ${lineNumber}: "${text}" is not a date and time`)
}

/**
 * The gateway's own layout:
 * `date_time,direction,amount,reference,description` with date_time in GMT+7
 * (`YYYY-MM-DD HH:mm[:ss]` or ISO 8601 with an offset), direction credit|debit.
 */
function parseNeutral(text: string): ParsedStatementLine[] {
  const records = rows(text)
  requireColumns(records, ['date_time', 'direction', 'amount'], 'neutral')
  return records.map((record, index) => {
    const lineNumber = index + 1
    const direction = record.direction?.toLowerCase()
    if (direction !== 'credit' && direction !== 'debit') {
      throw new StatementFormatError(`line ${lineNumber}: direction must be credit or debit`)
    }
    const description = record.description ?? ''
    return {
      lineNumber,
      lineAt: localTime(record.date_time, ['yyyy-LL-dd HH:mm:ss', 'yyyy-LL-dd HH:mm'], lineNumber),
      direction,
      amount: parseStatementAmount(record.amount, lineNumber),
      reference: record.reference?.trim()
        ? record.reference.trim().toUpperCase()
        : findReference(description),
      description: description.slice(0, 255),
    }
  })
}

/**
 * KBank (Kasikornbank) account statement export:
 * `Date,Time,Description,Withdrawal,Deposit,Balance,Channel,Details` with
 * DD-MM-YY dates (20xx), HH:MM times in GMT+7 and amounts with thousands
 * separators; a line has either Withdrawal or Deposit.
 */
function parseKbank(text: string): ParsedStatementLine[] {
  const records = rows(text)
  requireColumns(records, ['date', 'time', 'description', 'withdrawal', 'deposit'], 'kbank')
  return records.map((record, index) => {
    const lineNumber = index + 1
    const deposit = record.deposit?.trim()
    const withdrawal = record.withdrawal?.trim()
    if (!!deposit === !!withdrawal) {
      throw new StatementFormatError(
        `line ${lineNumber}: exactly one of Withdrawal or Deposit must be set`
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
        lineNumber
      ),
      direction: deposit ? 'credit' : 'debit',
      amount: parseStatementAmount(deposit || withdrawal, lineNumber),
      reference: findReference(`${record.details ?? ''} ${record.description ?? ''}`),
      description: description.slice(0, 255),
    }
  })
}
