import vine from '@vinejs/vine'
import type { FieldContext, Infer } from '@vinejs/vine/types'
import { onOff, validateInput, ActionError, type FieldError } from '#core/validation'

/**
 * A statement layout an operator defines (docs/reconciliation.md, "Layouts
 * operators define"): data, not code. One flat object, the same shape in the
 * back-office form and in `statement_layout_versions.definition`; this schema
 * validates both (a stored version is validated again when it is approved
 * and when it is read). The engine is defined_layout.ts.
 */

export const FORMATS = ['csv', 'xlsx'] as const
export const ENCODINGS = ['utf8', 'utf8-bom', 'utf16le', 'utf16be', 'windows-874'] as const
export const DELIMITERS = { comma: ',', tab: '\t', semicolon: ';', pipe: '|' } as const
export const AMOUNT_MODES = ['signed', 'split', 'direction'] as const
export const THOUSANDS = { comma: ',', dot: '.', space: ' ', apostrophe: "'", none: '' } as const
export const DECIMALS = { dot: '.', comma: ',' } as const
export const ERAS = ['ce', 'be'] as const

/** A column: its header name (with a header row) or its position, counted from 1. */
export type ColumnRef = string | number

/**
 * A cell of the declared figures: `row:column` counted from the file's first
 * row (`8:13`, `8:M`), or `+k:column`, the k-th row after the last
 * transaction line (`+2:D`). Kept as typed, normalised to `8:13` / `+2:4`.
 */
export type CellRef = string

/** Tokens of a date or time format (docs/reconciliation.md). */
export const DATE_TOKENS = [
  'TMMMM',
  'TMMM',
  'MMMM',
  'MMM',
  'MM',
  'M',
  'DD',
  'D',
  'YYYY',
  'YY',
  'HH',
  'H',
  'mm',
  'ss',
] as const

/** The format's tokens and literal text, in order. */
export function formatTokens(format: string) {
  const parts: Array<{ token: (typeof DATE_TOKENS)[number] } | { literal: string }> = []
  for (let at = 0; at < format.length;) {
    const token = DATE_TOKENS.find((candidate) => format.startsWith(candidate, at))
    if (token) {
      parts.push({ token })
      at += token.length
    } else {
      parts.push({ literal: format[at] })
      at++
    }
  }
  return parts
}

function hasToken(format: string, ...tokens: string[]) {
  return formatTokens(format).some((part) => 'token' in part && tokens.includes(part.token))
}

/** Digits: a position; anything else: a header name. */
function toColumnRef(value: unknown): ColumnRef | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1 ? value : null
  const text = String(value).trim()
  if (text === '') return null
  if (/^\d+$/.test(text)) {
    const position = Number(text)
    return position >= 1 && position <= 1000 ? position : null
  }
  return text.length <= 100 ? text : null
}

const columnRef = vine.createRule((value, _options, field: FieldContext) => {
  const ref = toColumnRef(value)
  if (ref === null) {
    return field.report(
      `${field.name} must be a column's header name, or its position counted from 1 (1 to 1000)`,
      'column_ref',
      field
    )
  }
  field.mutate(ref, field)
})

/** Several columns: a list, or text separated by commas. */
const columnList = vine.createRule((value, _options, field: FieldContext) => {
  const items = Array.isArray(value) ? value : String(value).split(',')
  const refs = items.map((item) => toColumnRef(item))
  const kept = refs.filter((ref, index) => ref !== null || String(items[index]).trim() !== '')
  if (kept.some((ref) => ref === null) || kept.length > 10) {
    return field.report(
      `${field.name} must be up to 10 columns separated by commas (header names or positions from 1)`,
      'column_list',
      field
    )
  }
  field.mutate(kept, field)
})

/** Words (a list, or text separated by commas), trimmed, none empty. */
const wordList = vine.createRule((value, _options, field: FieldContext) => {
  const items = (Array.isArray(value) ? value : String(value).split(','))
    .map((item) => String(item).trim())
    .filter(Boolean)
  if (items.length === 0 || items.length > 20 || items.some((item) => item.length > 40)) {
    return field.report(
      `${field.name} must be 1 to 20 words separated by commas (each at most 40 characters)`,
      'word_list',
      field
    )
  }
  field.mutate(items, field)
})

/** "A" → 1, "M" → 13, "AA" → 27. */
export function columnNumber(letters: string) {
  let number = 0
  for (const letter of letters.toUpperCase()) number = number * 26 + letter.charCodeAt(0) - 64
  return number
}

/** 1 → "A", 27 → "AA". */
export function columnLetter(position: number) {
  let letters = ''
  for (let n = position; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters
  }
  return letters
}

/** A declared figure's cell, parsed: from the top, or after the last line. */
export function parseCellRef(text: string) {
  const match = /^\s*(\+?)(\d{1,5})\s*[:,]\s*(\d{1,4}|[A-Za-z]{1,3})\s*$/.exec(text)
  if (!match) return null
  const row = Number(match[2])
  const column = /^\d+$/.test(match[3]) ? Number(match[3]) : columnNumber(match[3])
  if (row < 1 || column < 1) return null
  return { afterLast: match[1] === '+', row, column }
}

const cellRef = vine.createRule((value, _options, field: FieldContext) => {
  const ref = parseCellRef(String(value))
  if (!ref) {
    return field.report(
      `${field.name} must be a cell as row:column counted from 1 (e.g. 8:13 or 8:M), or +k:column for the k-th row after the last line (e.g. +2:D)`,
      'cell_ref',
      field
    )
  }
  field.mutate(`${ref.afterLast ? '+' : ''}${ref.row}:${ref.column}`, field)
})

const wholeNumber = vine.createRule<{ max: number }>((value, { max }, field: FieldContext) => {
  const text = String(value).trim()
  if (!/^\d+$/.test(text) || Number(text) > max) {
    return field.report(`${field.name} must be a whole number from 0 to ${max}`, 'whole', field)
  }
  field.mutate(Number(text), field)
})

const column = () => vine.any().use(columnRef()).optional()
const cell = () => vine.any().use(cellRef()).optional()
const flag = () => vine.any().use(onOff()).optional()

const definitionFields = {
  format: vine.enum(FORMATS),
  /** XLSX: the sheet's name, or its position from 1; empty: the first sheet. */
  sheet: vine.string().trim().maxLength(100).optional(),
  encoding: vine.enum(ENCODINGS).optional(),
  delimiter: vine.enum(Object.keys(DELIMITERS) as Array<keyof typeof DELIMITERS>).optional(),
  /** The table starts with a row of column names (else columns are positions). */
  header_row: flag(),
  /** Rows before the table (before its header row, when it has one). */
  skip_rows: vine
    .any()
    .use(wholeNumber({ max: 1000 }))
    .optional(),
  /** Rows after the table, at the end of the file (totals, signatures). */
  footer_rows: vine
    .any()
    .use(wholeNumber({ max: 100 }))
    .optional(),
  /** The table ends at the first row whose first cell starts with this text. */
  stop_at: vine.string().trim().maxLength(100).optional(),

  date_column: vine.any().use(columnRef()),
  /** Empty: the time is in the date column (the date format has a time), or there is none (00:00). */
  time_column: column(),
  description_column: column(),
  reference_column: column(),
  trans_ref_column: column(),
  details_columns: vine.any().use(columnList()).optional(),

  amount_mode: vine.enum(AMOUNT_MODES),
  /** signed: negative is money out; direction: the amount, its direction in direction_column. */
  amount_column: column(),
  direction_column: column(),
  credit_words: vine.any().use(wordList()).optional(),
  debit_words: vine.any().use(wordList()).optional(),
  withdrawal_column: column(),
  deposit_column: column(),
  balance_column: column(),

  thousands: vine.enum(Object.keys(THOUSANDS) as Array<keyof typeof THOUSANDS>).optional(),
  decimal: vine.enum(Object.keys(DECIMALS) as Array<keyof typeof DECIMALS>).optional(),
  /** (1,234.00) is negative. */
  parentheses_negative: flag(),
  /** 1,234.00- is negative. */
  trailing_minus: flag(),

  date_format: vine.string().trim().minLength(1).maxLength(40),
  era: vine.enum(ERAS).optional(),
  time_format: vine.string().trim().maxLength(20).optional(),

  opening_balance_cell: cell(),
  closing_balance_cell: cell(),
  deposits_total_cell: cell(),
  withdrawals_total_cell: cell(),
  deposits_count_cell: cell(),
  withdrawals_count_cell: cell(),
}

const definitionSchema = vine.object(definitionFields)
const definitionValidator = vine.compile(definitionSchema)

type DefinitionInput = Infer<typeof definitionSchema>

/** A validated definition, every option set (defaults filled in). */
export interface LayoutDefinition {
  format: (typeof FORMATS)[number]
  sheet: string | null
  encoding: (typeof ENCODINGS)[number]
  delimiter: keyof typeof DELIMITERS
  header_row: boolean
  skip_rows: number
  footer_rows: number
  stop_at: string | null
  date_column: ColumnRef
  time_column: ColumnRef | null
  description_column: ColumnRef | null
  reference_column: ColumnRef | null
  trans_ref_column: ColumnRef | null
  details_columns: ColumnRef[]
  amount_mode: (typeof AMOUNT_MODES)[number]
  amount_column: ColumnRef | null
  direction_column: ColumnRef | null
  credit_words: string[]
  debit_words: string[]
  withdrawal_column: ColumnRef | null
  deposit_column: ColumnRef | null
  balance_column: ColumnRef | null
  thousands: keyof typeof THOUSANDS
  decimal: keyof typeof DECIMALS
  parentheses_negative: boolean
  trailing_minus: boolean
  date_format: string
  era: (typeof ERAS)[number]
  time_format: string | null
  opening_balance_cell: CellRef | null
  closing_balance_cell: CellRef | null
  deposits_total_cell: CellRef | null
  withdrawals_total_cell: CellRef | null
  deposits_count_cell: CellRef | null
  withdrawals_count_cell: CellRef | null
}

/** Every field of a definition, in the form's order. */
export const DEFINITION_FIELDS = Object.keys(definitionFields) as Array<keyof LayoutDefinition>

/** The figures a file may declare, by field: what the refusal calls them. */
export const DECLARED_FIGURES = {
  opening_balance_cell: 'opening balance',
  closing_balance_cell: 'closing balance',
  deposits_total_cell: 'total of deposits',
  withdrawals_total_cell: 'total of withdrawals',
  deposits_count_cell: 'number of deposits',
  withdrawals_count_cell: 'number of withdrawals',
} as const

export const DEFINITION_MESSAGES = {
  'format.enum': `format must be one of: ${FORMATS.join(', ')}`,
  'encoding.enum': `encoding must be one of: ${ENCODINGS.join(', ')}`,
  'delimiter.enum': `delimiter must be one of: ${Object.keys(DELIMITERS).join(', ')}`,
  'amount_mode.enum': `amount_mode must be one of: ${AMOUNT_MODES.join(', ')}`,
  'thousands.enum': `thousands must be one of: ${Object.keys(THOUSANDS).join(', ')}`,
  'decimal.enum': `decimal must be one of: ${Object.keys(DECIMALS).join(', ')}`,
  'era.enum': 'era must be ce (Gregorian) or be (Buddhist era, CE + 543)',
  'date_column.required': 'date_column is required: the column of each line’s date',
  'date_format.required': 'date_format is required, e.g. DD/MM/YYYY or DD TMMM YY',
}

function withDefaults(data: DefinitionInput): LayoutDefinition {
  return {
    format: data.format,
    sheet: data.sheet ?? null,
    encoding: data.encoding ?? 'utf8',
    delimiter: data.delimiter ?? 'comma',
    header_row: data.header_row ?? false,
    skip_rows: (data.skip_rows as number | undefined) ?? 0,
    footer_rows: (data.footer_rows as number | undefined) ?? 0,
    stop_at: data.stop_at ?? null,
    date_column: data.date_column as ColumnRef,
    time_column: (data.time_column as ColumnRef | undefined) ?? null,
    description_column: (data.description_column as ColumnRef | undefined) ?? null,
    reference_column: (data.reference_column as ColumnRef | undefined) ?? null,
    trans_ref_column: (data.trans_ref_column as ColumnRef | undefined) ?? null,
    details_columns: (data.details_columns as ColumnRef[] | undefined) ?? [],
    amount_mode: data.amount_mode,
    amount_column: (data.amount_column as ColumnRef | undefined) ?? null,
    direction_column: (data.direction_column as ColumnRef | undefined) ?? null,
    credit_words: (data.credit_words as string[] | undefined) ?? [],
    debit_words: (data.debit_words as string[] | undefined) ?? [],
    withdrawal_column: (data.withdrawal_column as ColumnRef | undefined) ?? null,
    deposit_column: (data.deposit_column as ColumnRef | undefined) ?? null,
    balance_column: (data.balance_column as ColumnRef | undefined) ?? null,
    thousands: data.thousands ?? 'comma',
    decimal: data.decimal ?? 'dot',
    parentheses_negative: data.parentheses_negative ?? false,
    trailing_minus: data.trailing_minus ?? false,
    date_format: data.date_format,
    era: data.era ?? 'ce',
    time_format: data.time_format ?? null,
    opening_balance_cell: (data.opening_balance_cell as string | undefined) ?? null,
    closing_balance_cell: (data.closing_balance_cell as string | undefined) ?? null,
    deposits_total_cell: (data.deposits_total_cell as string | undefined) ?? null,
    withdrawals_total_cell: (data.withdrawals_total_cell as string | undefined) ?? null,
    deposits_count_cell: (data.deposits_count_cell as string | undefined) ?? null,
    withdrawals_count_cell: (data.withdrawals_count_cell as string | undefined) ?? null,
  }
}

/** The rules that involve several options, each error beside its field. */
export function definitionErrors(definition: LayoutDefinition): FieldError[] {
  const errors: FieldError[] = []
  const need = (field: keyof LayoutDefinition, why: string) => {
    const value = definition[field]
    if (value === null || (Array.isArray(value) && value.length === 0)) {
      errors.push({ field, message: `${field} is required ${why}` })
    }
  }
  if (definition.amount_mode === 'signed') {
    need('amount_column', 'with one signed amount column (negative: money out)')
  } else if (definition.amount_mode === 'split') {
    need('withdrawal_column', 'with withdrawal and deposit columns')
    need('deposit_column', 'with withdrawal and deposit columns')
  } else {
    need('amount_column', 'with an amount and a direction column')
    need('direction_column', 'with an amount and a direction column')
    need('credit_words', 'with a direction column: the words that mean money in, e.g. CR, ฝาก')
    need('debit_words', 'with a direction column: the words that mean money out, e.g. DR, ถอน')
    const clash = definition.credit_words.find((word) =>
      definition.debit_words.some((other) => other.toLowerCase() === word.toLowerCase())
    )
    if (clash) {
      errors.push({ field: 'debit_words', message: `"${clash}" is both a credit and a debit word` })
    }
  }
  if (!definition.header_row) {
    for (const field of DEFINITION_FIELDS) {
      if (!field.endsWith('_column') && field !== 'details_columns') continue
      const refs = [definition[field]].flat().filter((ref) => ref !== null)
      if (refs.some((ref) => typeof ref === 'string')) {
        errors.push({
          field,
          message: `${field}: without a header row, columns are positions counted from 1 (e.g. 3)`,
        })
      }
    }
  }
  if (THOUSANDS[definition.thousands] === DECIMALS[definition.decimal]) {
    errors.push({
      field: 'decimal',
      message: 'decimal must differ from the thousands separator',
    })
  }
  const date = definition.date_format
  if (!hasToken(date, 'D', 'DD')) {
    errors.push({ field: 'date_format', message: 'date_format needs the day: D or DD' })
  }
  if (!hasToken(date, 'M', 'MM', 'MMM', 'MMMM', 'TMMM', 'TMMMM')) {
    errors.push({
      field: 'date_format',
      message:
        'date_format needs the month: MM (number), MMM / MMMM (English), TMMM / TMMMM (Thai)',
    })
  }
  if (!hasToken(date, 'YY', 'YYYY')) {
    errors.push({ field: 'date_format', message: 'date_format needs the year: YY or YYYY' })
  }
  if (definition.time_column !== null) {
    if (!definition.time_format) {
      errors.push({
        field: 'time_format',
        message: 'time_format is required with a time column, e.g. HH:mm',
      })
    } else if (
      !hasToken(definition.time_format, 'H', 'HH') ||
      !hasToken(definition.time_format, 'mm')
    ) {
      errors.push({
        field: 'time_format',
        message: 'time_format needs hours and minutes: HH:mm or HH:mm:ss',
      })
    }
    if (hasToken(date, 'H', 'HH')) {
      errors.push({
        field: 'time_column',
        message: 'the date format already holds the time: leave time_column empty',
      })
    }
  } else if (definition.time_format && !hasToken(date, 'H', 'HH')) {
    errors.push({
      field: 'time_format',
      message:
        'time_format is used with a time column; for a date and time in one cell, put the time in date_format (e.g. DD/MM/YYYY HH:mm)',
    })
  }
  if (definition.format === 'csv' && definition.sheet) {
    errors.push({ field: 'sheet', message: 'sheet is for XLSX files only' })
  }
  if (definition.stop_at && definition.footer_rows > 0) {
    errors.push({
      field: 'stop_at',
      message: 'give either footer_rows or stop_at: the table ends at one of them',
    })
  }
  return errors
}

/**
 * Validates a definition (a form's input or a stored version): every
 * problem, each with its field, as one ActionError.
 */
export async function validateDefinition(
  input: Record<string, unknown>
): Promise<LayoutDefinition> {
  const cleaned = Object.fromEntries(
    DEFINITION_FIELDS.filter((field) => field in input).map((field) => [field, input[field]])
  )
  // A stored definition holds nulls for options not set, and false for switches off.
  for (const [field, value] of Object.entries(cleaned)) {
    if (value === null || (Array.isArray(value) && value.length === 0)) delete cleaned[field]
  }
  const data = await validateInput(definitionValidator, cleaned, DEFINITION_MESSAGES)
  const definition = withDefaults(data)
  const errors = definitionErrors(definition)
  if (errors.length > 0) throw new ActionError(errors)
  return definition
}

/** The definition as the form shows it: text per field (lists joined, switches on/off). */
export function definitionFormValues(definition: LayoutDefinition): Record<string, string> {
  return Object.fromEntries(
    DEFINITION_FIELDS.map((field) => {
      const value = definition[field]
      const text =
        value === null
          ? ''
          : Array.isArray(value)
            ? value.join(', ')
            : typeof value === 'boolean'
              ? value
                ? 'on'
                : ''
              : String(value)
      return [field, text]
    })
  )
}

/** The definition as a request card and the audit log show it: field → text ("—" when not set). */
export function describeDefinition(definition: LayoutDefinition | null): Record<string, string> {
  if (!definition) return {}
  return Object.fromEntries(
    DEFINITION_FIELDS.map((field) => {
      const value = definition[field]
      const text =
        value === null || (Array.isArray(value) && value.length === 0)
          ? '—'
          : Array.isArray(value)
            ? value.join(', ')
            : typeof value === 'boolean'
              ? value
                ? 'on'
                : 'off'
              : String(value)
      return [field, text]
    })
  )
}
