import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import type { DepositChannel } from '#payments/models/deposit_account'
import { isBankCode } from '#core/banks'
import { clearable, onOff, thbAmount } from '#core/validation'
import { normalizeProxy } from '#payments/promptpay_qr'
import { depositProvider } from '#payments/providers/registry'
import { rememberLayoutName } from '#payments/deposit_account_snapshot'

/**
 * What an operator types to create or change a deposit account: the rule of
 * each field, the field sets of the create and update actions, their
 * messages, and the deposit-account commands' options as that input.
 */

const CHANNELS: DepositChannel[] = ['qr', 'transfer', 'external']
export const DEPOSIT_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
export const DEPOSIT_GROUP_RULE =
  '1-64 letters, digits, ".", "-" or "_", starting with a letter or digit'

const MAX_ADJUSTMENT_LIMIT = 9999 // 99.99 THB
const MAX_PRIORITY = 1_000_000
const MAX_COUNT_LIMIT = 4_294_967_295 // unsigned INT column

/** A bank code of the merchant API, in any case; becomes upper case. */
export const bankCode = vine.createRule((value, _options, field: FieldContext) => {
  const bank = String(value).trim().toUpperCase()
  if (!isBankCode(bank)) {
    return field.report(
      `${field.name} must be a bank code of the merchant API (e.g. KBANK, SCB), not "${value}"`,
      'bank_code',
      field
    )
  }
  field.mutate(bank, field)
})

/** 10 to 15 digits; spaces and dashes as printed on passbooks are dropped. */
const accountNumber = vine.createRule((value, _options, field: FieldContext) => {
  const digits = String(value).replace(/[\s-]/g, '')
  if (!/^\d{10,15}$/.test(digits)) {
    return field.report(
      `${field.name} must be 10 to 15 digits (spaces and dashes are ignored)`,
      'account_no',
      field
    )
  }
  field.mutate(digits, field)
})

/**
 * A PromptPay proxy as typed ("081-234-5678", "+66 81 234 5678"), stored as
 * digits with mobile numbers in their local form ("0812345678"): one proxy,
 * one stored text.
 */
const promptpayId = vine.createRule((value, _options, field: FieldContext) => {
  try {
    const { proxyType, value: proxy } = normalizeProxy(String(value))
    field.mutate(proxyType === 'mobile' ? `0${proxy.slice(-9)}` : proxy, field)
  } catch {
    field.report(
      `${field.name} must be a mobile number (0 + 9 digits), a 13-digit national/tax id or a 15-digit e-wallet id, not "${value}"`,
      'promptpay_id',
      field
    )
  }
})

const billerId = vine.createRule((value, _options, field: FieldContext) => {
  const text = String(value).trim()
  if (!/^\d{15}$/.test(text)) {
    return field.report(
      `${field.name} must be exactly 15 digits (tax id + 2-digit suffix), not "${value}"`,
      'biller_id',
      field
    )
  }
  field.mutate(text, field)
})

const providerName = vine.createRule((value, _options, field: FieldContext) => {
  const name = String(value).trim().toLowerCase()
  if (!depositProvider(name)) {
    return field.report(
      `${field.name}: "${value}" is not a known deposit provider`,
      'provider',
      field
    )
  }
  field.mutate(name, field)
})

/**
 * A statement layout defined in the back-office (with an approved version),
 * by its name or id: the layout the account's files are read with when an
 * import names none (docs/reconciliation.md, "Layouts operators define").
 */
const statementLayout = vine.createRule(
  async (value, _options, field: FieldContext) => {
    const text = String(value).trim().toLowerCase()
    const row = await db
      .from('statement_layouts')
      .where(/^\d+$/.test(text) ? 'id' : 'name', /^\d+$/.test(text) ? Number(text) : text)
      .select('id', 'name')
      .first()
    if (!row) {
      return field.report(
        `${field.name}: "${value}" is not a statement layout defined in the back-office (or "none")`,
        'statement_layout',
        field
      )
    }
    rememberLayoutName(Number(row.id), String(row.name))
    field.mutate(Number(row.id), field)
  },
  { isAsync: true }
)

/** An object, or its JSON text as typed on a command line. */
const jsonObject = vine.createRule((value, _options, field: FieldContext) => {
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {}
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return field.report(
      `${field.name} must be a JSON object, e.g. {"fail":true}`,
      'json_object',
      field
    )
  }
  field.mutate(parsed, field)
})

/** A whole number from min to max, as typed (text) or sent (number). */
const wholeNumber = vine.createRule<{ min: number; max: number; orNone?: boolean }>(
  (value, { min, max, orNone }, field: FieldContext) => {
    const text = String(value).trim()
    const number = /^-?\d+$/.test(text) ? Number(text) : Number.NaN
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      return field.report(
        `${field.name} must be a whole number from ${min} to ${max}` +
          (orNone ? ', or "none" for unlimited' : ''),
        'whole_number',
        field
      )
    }
    field.mutate(number, field)
  }
)

const limitAmount = () => clearable(vine.any().use(thbAmount({}))).optional()
const limitCount = () =>
  clearable(vine.any().use(wholeNumber({ min: 1, max: MAX_COUNT_LIMIT, orNone: true }))).optional()

/** The fields that say what an account is; all required on create. */
function describingFields() {
  return {
    deposit_group: vine.string().trim().regex(DEPOSIT_GROUP_PATTERN),
    channel: vine.string().trim().toLowerCase().in(CHANNELS),
    bank: vine.any().use(bankCode()),
    account_no: vine.any().use(accountNumber()),
    account_name: vine.string().trim().minLength(1).maxLength(120),
  }
}

/** The input of create_deposit_account (snake_case: the column names). */
export function newAccountFields() {
  return { ...describingFields(), ...settingFields() }
}

/** The input of update_deposit_account: every field optional. */
export function accountChangeFields() {
  const fields = describingFields()
  return {
    deposit_group: fields.deposit_group.optional(),
    channel: fields.channel.optional(),
    bank: fields.bank.optional(),
    account_no: fields.account_no.optional(),
    account_name: fields.account_name.optional(),
    ...settingFields(),
  }
}

function settingFields() {
  return {
    /** qr: a PromptPay proxy (replaces a biller id). */
    promptpay_id: clearable(vine.any().use(promptpayId())).optional(),
    /** qr: a biller id, bill-payment QR with a per-order ref1 (replaces a PromptPay id). */
    biller_id: clearable(vine.any().use(billerId())).optional(),
    /** external: the provider adapter's name. */
    provider: clearable(vine.any().use(providerName())).optional(),
    provider_config: clearable(vine.any().use(jsonObject())).optional(),
    min_amount: vine.any().use(thbAmount({})).optional(),
    max_amount: limitAmount(),
    hourly_count_limit: limitCount(),
    hourly_amount_limit: limitAmount(),
    /** Bangkok calendar day. */
    daily_count_limit: limitCount(),
    daily_amount_limit: limitAmount(),
    /** Largest satang added to an amount to make its transfer_amount unique on the account. */
    max_adjustment: vine
      .any()
      .use(wholeNumber({ min: 0, max: MAX_ADJUSTMENT_LIMIT }))
      .optional(),
    /** Higher is tried first. */
    priority: vine
      .any()
      .use(wholeNumber({ min: -MAX_PRIORITY, max: MAX_PRIORITY }))
      .optional(),
    /** Off: no new order is drawn on the account (open orders stay valid). */
    active: vine.any().use(onOff()).optional(),
    /** The statement layout its files are read with when an import names none ("none": neutral). */
    statement_layout_id: clearable(vine.any().use(statementLayout())).optional(),
    /** Why (kept in the audit log). */
    comment: vine.string().trim().maxLength(500).optional(),
  }
}

export const DEPOSIT_ACCOUNT_MESSAGES = {
  'deposit_group.regex': `deposit_group: ${DEPOSIT_GROUP_RULE}`,
  'channel.in': `channel must be one of ${CHANNELS.join(', ')}`,
  'account_name.minLength': 'account_name must not be empty',
}

/**
 * The options of deposit-account:create and :update (property names of the
 * commands) → the input fields of the create and update actions. One list,
 * so that both commands pass every option the same way.
 */
const COMMAND_OPTIONS = {
  group: 'deposit_group',
  channel: 'channel',
  bank: 'bank',
  accountNo: 'account_no',
  accountName: 'account_name',
  promptpayId: 'promptpay_id',
  billerId: 'biller_id',
  provider: 'provider',
  providerConfig: 'provider_config',
  min: 'min_amount',
  max: 'max_amount',
  hourlyCount: 'hourly_count_limit',
  hourlyAmount: 'hourly_amount_limit',
  dailyCount: 'daily_count_limit',
  dailyAmount: 'daily_amount_limit',
  maxAdjustment: 'max_adjustment',
  priority: 'priority',
  comment: 'comment',
} as const

/** A deposit-account command's parsed options as the actions' input. */
export function depositAccountInputFromOptions(
  options: Partial<Record<keyof typeof COMMAND_OPTIONS, unknown>>
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(COMMAND_OPTIONS).map(([option, field]) => [
      field,
      options[option as keyof typeof COMMAND_OPTIONS],
    ])
  )
}
