import vine, { errors as vineErrors, SimpleMessagesProvider } from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { parseAmount } from '#core/money'

/** One problem with an operator's input or request, named by its field (null: the whole). */
export interface FieldError {
  field: string | null
  message: string
}

/**
 * An operator action refused: invalid input (every problem, each with its
 * field) or a guard (the order is no longer open, the account exists...).
 * The Ace command prints the messages and exits 1; the back-office shows each
 * beside its field. Nothing was written.
 */
export class ActionError extends Error {
  constructor(
    public errors: FieldError[],
    /** The target does not exist (404 in the back-office). */
    public notFound = false
  ) {
    super(errors.map((error) => error.message).join('\n'))
    this.name = 'ActionError'
  }

  static field(field: string, message: string) {
    return new ActionError([{ field, message }])
  }

  static general(message: string) {
    return new ActionError([{ field: null, message }])
  }

  static notFound(field: string, message: string) {
    return new ActionError([{ field, message }], true)
  }
}

/**
 * Messages that name the field in the spec's and the schema's words, so that
 * the panel and the CLI show the same text.
 */
const OPERATOR_MESSAGES = {
  required: '{{ field }} is required',
  string: '{{ field }} must be text',
  number: '{{ field }} must be a number',
  boolean: '{{ field }} must be on or off',
  enum: '{{ field }} must be one of: {{ choices }}',
  regex: '{{ field }} has the wrong format',
  minLength: '{{ field }} must be at least {{ min }} characters',
  maxLength: '{{ field }} must be at most {{ max }} characters',
  withoutDecimals: '{{ field }} must be a whole number',
  min: '{{ field }} must be at least {{ min }}',
  max: '{{ field }} must be at most {{ max }}',
  range: '{{ field }} must be from {{ min }} to {{ max }}',
  array: '{{ field }} must be a list',
  object: '{{ field }} must be an object',
}

/**
 * Validates `data` with a compiled VineJS schema; an ActionError lists every
 * problem. Empty strings from forms and flags count as "not given".
 */
export async function validateInput<T>(
  validator: { validate: (data: any, options?: any) => Promise<T> },
  data: Record<string, unknown>,
  /** Messages for this schema by "field.rule", e.g. a regex explained in words. */
  messages: Record<string, string> = {}
): Promise<T> {
  const cleaned = Object.fromEntries(
    Object.entries(data).filter(([, value]) => value !== undefined && value !== '')
  )
  const messagesProvider = new SimpleMessagesProvider({ ...OPERATOR_MESSAGES, ...messages })
  try {
    return await validator.validate(cleaned, { messagesProvider })
  } catch (error) {
    if (!(error instanceof vineErrors.E_VALIDATION_ERROR)) throw error
    const problems = error.messages as Array<{ field: string; message: string }>
    throw new ActionError(problems.map(({ field, message }) => ({ field, message })))
  }
}

const confirmationValidator = vine.compile(vine.object({ confirm: vine.accepted() }))

/**
 * The box an operator ticks to confirm a change before it runs (a switch,
 * a bank's answer): refused with `message` beside the box when unticked.
 */
export async function assertConfirmed(input: Record<string, unknown>, message: string) {
  await validateInput(confirmationValidator, input, {
    'confirm.required': message,
    'confirm.accepted': message,
  })
}

/** A THB amount typed by an operator ("20", "20.5", "1,000.00"); becomes satang. */
export const thbAmount = vine.createRule<{ allowZero?: boolean }>(
  (value, options, field: FieldContext) => {
    const satang = parseAmount(typeof value === 'string' ? value.replaceAll(',', '') : value)
    if (satang === null || (!options.allowZero && satang === 0)) {
      field.report(
        `${field.name} must be a${options.allowZero ? '' : ' positive'} THB amount with at most 2 decimals (e.g. 20.00)`,
        'thb_amount',
        field
      )
      return
    }
    field.mutate(satang, field)
  }
)

/** Words that clear an optional setting (an unlimited limit, no group). */
export const CLEARED = ['none', 'unlimited', 'off'] as const

/** Whether a typed value means "clear this setting". */
export function isClearedValue(value: unknown) {
  return (
    value === null ||
    value === false ||
    (typeof value === 'string' &&
      (CLEARED as readonly string[]).includes(value.trim().toLowerCase()))
  )
}

/**
 * The schema's value, or null when the operator clears the setting ("none",
 * "unlimited", "off"). A union, because VineJS drops a plain null on an
 * optional field.
 */
export function clearable<Schema extends Parameters<typeof vine.union.else>[0]>(schema: Schema) {
  return vine.union([
    vine.union.if(
      isClearedValue,
      vine.any().transform(() => null)
    ),
    vine.union.else(schema),
  ])
}

/** "on"/"off", "true"/"false", "yes"/"no", "1"/"0", or a boolean. */
export const onOff = vine.createRule((value, _options, field: FieldContext) => {
  if (typeof value === 'boolean') return
  const text = String(value).trim().toLowerCase()
  if (['on', 'true', 'yes', '1'].includes(text)) return field.mutate(true, field)
  if (['off', 'false', 'no', '0'].includes(text)) return field.mutate(false, field)
  field.report(`${field.name} must be on or off`, 'on_off', field)
})
