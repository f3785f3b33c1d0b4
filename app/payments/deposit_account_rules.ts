import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount, { type DepositChannel } from '#payments/models/deposit_account'
import { isBankCode } from '#core/banks'
import { formatAmount, formatThb } from '#core/money'
import { ActionError, clearable, onOff, thbAmount, type FieldError } from '#core/validation'
import { normalizeProxy } from '#payments/promptpay_qr'
import { depositProvider } from '#payments/providers/registry'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * The deposit-account pool's rules, shared by the create and update actions:
 * the fields an operator types, how they combine on one account, and what
 * makes two accounts of the pool clash.
 */

const CHANNELS: DepositChannel[] = ['qr', 'transfer', 'external']
export const DEPOSIT_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
export const DEPOSIT_GROUP_RULE =
  '1-64 letters, digits, ".", "-" or "_", starting with a letter or digit'

const DEFAULT_MIN_AMOUNT = 2000 // 20.00 THB, the API's smallest payment
const DEFAULT_MAX_ADJUSTMENT = 999
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
 * The names of the statement layouts operators defined, by id: what the
 * request card and the forms show for `statement_layout_id`. Loaded by
 * `loadLayoutNames` when an account's change is prepared.
 */
const layoutNames = new Map<number, string>()

/** Reads every defined layout's name (a handful of rows) for displayAccountFields. */
export async function loadLayoutNames(client: QueryClientContract = db.connection()) {
  const rows = await client.from('statement_layouts').select('id', 'name')
  layoutNames.clear()
  for (const row of rows) layoutNames.set(Number(row.id), String(row.name))
}

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
    layoutNames.set(Number(row.id), String(row.name))
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

/** What an account is and how it is limited: the columns the actions set. */
export type DepositAccountAttributes = Pick<
  DepositAccount,
  | 'depositGroup'
  | 'channel'
  | 'bank'
  | 'accountNo'
  | 'accountName'
  | 'promptpayId'
  | 'billerId'
  | 'provider'
  | 'providerConfig'
  | 'minAmount'
  | 'maxAmount'
  | 'hourlyCountLimit'
  | 'hourlyAmountLimit'
  | 'dailyCountLimit'
  | 'dailyAmountLimit'
  | 'maxAdjustment'
  | 'priority'
  | 'active'
  | 'statementLayoutId'
>

/** Input field → model property. */
const PROPERTIES = {
  deposit_group: 'depositGroup',
  channel: 'channel',
  bank: 'bank',
  account_no: 'accountNo',
  account_name: 'accountName',
  promptpay_id: 'promptpayId',
  biller_id: 'billerId',
  provider: 'provider',
  provider_config: 'providerConfig',
  min_amount: 'minAmount',
  max_amount: 'maxAmount',
  hourly_count_limit: 'hourlyCountLimit',
  hourly_amount_limit: 'hourlyAmountLimit',
  daily_count_limit: 'dailyCountLimit',
  daily_amount_limit: 'dailyAmountLimit',
  max_adjustment: 'maxAdjustment',
  priority: 'priority',
  active: 'active',
  statement_layout_id: 'statementLayoutId',
} as const satisfies Record<string, keyof DepositAccountAttributes>

type Field = keyof typeof PROPERTIES

/** The defaults of a new account (the describing fields are required input). */
const NEW_ACCOUNT: DepositAccountAttributes = {
  depositGroup: '',
  channel: 'qr',
  bank: '',
  accountNo: '',
  accountName: '',
  promptpayId: null,
  billerId: null,
  provider: null,
  providerConfig: null,
  minAmount: DEFAULT_MIN_AMOUNT,
  maxAmount: null,
  hourlyCountLimit: null,
  hourlyAmountLimit: null,
  dailyCountLimit: null,
  dailyAmountLimit: null,
  maxAdjustment: DEFAULT_MAX_ADJUSTMENT,
  priority: 0,
  active: true,
  statementLayoutId: null,
}

/**
 * The account that results from validated input over `current` (null: a
 * new account, from the defaults). Fields not given stay as they are.
 */
export function resultingAccount(
  current: DepositAccountAttributes | null,
  data: Partial<Record<Field, unknown>>
): DepositAccountAttributes {
  const next = attributesOf(current ?? NEW_ACCOUNT)
  for (const [field, property] of Object.entries(PROPERTIES)) {
    const value = data[field as Field]
    if (value !== undefined) (next as Record<string, unknown>)[property] = value
  }
  // A QR account shows one proxy: giving one replaces the other.
  if (data.promptpay_id && data.biller_id === undefined) next.billerId = null
  if (data.biller_id && data.promptpay_id === undefined) next.promptpayId = null
  // Moving an account to another channel drops what only the old channel uses.
  if (current && next.channel !== current.channel) {
    if (next.channel !== 'qr' && data.promptpay_id === undefined && data.biller_id === undefined) {
      next.promptpayId = null
      next.billerId = null
    }
    if (
      next.channel !== 'external' &&
      data.provider === undefined &&
      data.provider_config === undefined
    ) {
      next.provider = null
      next.providerConfig = null
    }
  }
  return next
}

/** A copy of the account's attributes (a model's live in getters). */
function attributesOf(account: DepositAccountAttributes): DepositAccountAttributes {
  return Object.fromEntries(
    Object.values(PROPERTIES).map((property) => [property, account[property]])
  ) as DepositAccountAttributes
}

/** Rules that involve several fields, checked on the resulting account. */
export function consistencyErrors(account: DepositAccountAttributes): FieldError[] {
  const errors: FieldError[] = []
  if (account.channel === 'qr') {
    if (account.promptpayId && account.billerId) {
      errors.push({
        field: 'biller_id',
        message: 'a qr account has either promptpay_id or biller_id, not both',
      })
    } else if (!account.promptpayId && !account.billerId) {
      errors.push({
        field: 'promptpay_id',
        message:
          'a qr account needs promptpay_id (mobile number, 13-digit national/tax id or 15-digit e-wallet id) or biller_id (15 digits, bill payment)',
      })
    }
  } else {
    if (account.promptpayId) {
      errors.push({ field: 'promptpay_id', message: 'promptpay_id belongs to qr accounts only' })
    }
    if (account.billerId) {
      errors.push({ field: 'biller_id', message: 'biller_id belongs to qr accounts only' })
    }
  }
  if (account.channel === 'external') {
    if (!account.provider) {
      errors.push({
        field: 'provider',
        message: 'an external account needs provider (e.g. sandbox)',
      })
    }
  } else {
    if (account.provider) {
      errors.push({ field: 'provider', message: 'provider belongs to external accounts only' })
    }
    if (account.providerConfig) {
      errors.push({
        field: 'provider_config',
        message: 'provider_config belongs to external accounts only',
      })
    }
  }
  if (account.maxAmount !== null && account.minAmount > account.maxAmount) {
    errors.push({
      field: 'min_amount',
      message: `min_amount ${formatAmount(account.minAmount)} is above max_amount ${formatAmount(account.maxAmount)}`,
    })
  }
  return errors
}

/**
 * Every account of the pool, each row locked until the transaction ends.
 * The caller's transaction must be REPEATABLE READ: then the locking scan
 * also locks the gap after the last row, so no other transaction can add an
 * account meanwhile. Two creates that would clash run one after the other
 * (or, on an empty pool, one is a deadlock victim and retries) and the
 * second sees the first. Payment creates wait for these locks only while an
 * operator changes the pool (milliseconds).
 */
export async function lockPool(trx: TransactionClientContract) {
  return DepositAccount.query({ client: trx }).orderBy('id').forUpdate()
}

/** The fields that make an account clash with another one of the pool. */
export const IDENTITY_FIELDS = ['channel', 'bank', 'account_no', 'promptpay_id', 'biller_id']

/**
 * What `account` would share with another account of `pool` (all of it,
 * inactive accounts included: they keep their open orders and may come back):
 * - one bank account taking payments matched by amount (transfer, PromptPay
 *   QR): two orders of one amount could not be told apart;
 * - one PromptPay id, in any of its written forms: customers of two accounts
 *   would scan identical QR codes for one amount, and a payment could be
 *   matched to the other account's order;
 * - one biller id: its bill payments would arrive for two accounts at once.
 */
export function poolClashes(
  account: DepositAccountAttributes,
  pool: DepositAccount[],
  selfId: number | null
): FieldError[] {
  const others = pool.filter((other) => other.id !== selfId)
  const errors: FieldError[] = []
  const sameBankAccount = matchesByAmount(account)
    ? others.find(
        (other) =>
          matchesByAmount(other) &&
          other.bank === account.bank &&
          other.accountNo === account.accountNo
      )
    : undefined
  if (sameBankAccount) {
    errors.push({
      field: 'account_no',
      message:
        `${account.bank} ${account.accountNo} is already ${describeAccount(sameBankAccount)}; ` +
        'payments to one bank account are told apart by amount, so it can be in the pool only once ' +
        '(change that account instead)',
    })
  }
  const proxy = account.promptpayId ? proxyKey(account.promptpayId) : null
  const samePromptPay = proxy
    ? others.find((other) => other.promptpayId && proxyKey(other.promptpayId) === proxy)
    : undefined
  if (samePromptPay) {
    errors.push({
      field: 'promptpay_id',
      message:
        `promptpay_id ${account.promptpayId} is already used by ${describeAccount(samePromptPay)}; ` +
        'payments to a PromptPay id are told apart by amount, so it can be in the pool only once',
    })
  }
  const sameBiller = account.billerId
    ? others.find((other) => other.billerId === account.billerId)
    : undefined
  if (sameBiller) {
    errors.push({
      field: 'biller_id',
      message:
        `biller_id ${account.billerId} is already used by ${describeAccount(sameBiller)}; ` +
        'a biller id can be in the pool only once',
    })
  }
  return errors
}

/** Accounts whose payments are matched by transfer_amount (not by reference or provider). */
function matchesByAmount(account: Pick<DepositAccountAttributes, 'channel' | 'billerId'>) {
  return account.channel === 'transfer' || (account.channel === 'qr' && !account.billerId)
}

/** The proxy a QR code carries: "0812345678" and "66812345678" are one. */
function proxyKey(proxy: string) {
  try {
    const { proxyType, value } = normalizeProxy(proxy)
    return `${proxyType}:${value}`
  } catch {
    return proxy
  }
}

function describeAccount(account: DepositAccount) {
  return `deposit account ${account.id} (${account.channel}, group ${account.depositGroup}, ${account.bank} ${account.accountNo})`
}

/** Throws every error at once, as one ActionError. */
export function refuseIfAny(errors: FieldError[]) {
  if (errors.length > 0) throw new ActionError(errors)
}

/**
 * The account as the audit log and the pool screens show it, by input field
 * name: amounts in THB with 2 decimals, null for unlimited.
 */
export function depositAccountSnapshot(account: DepositAccountAttributes) {
  const amount = (satang: number | null) => (satang === null ? null : formatAmount(satang))
  return {
    deposit_group: account.depositGroup,
    channel: account.channel,
    bank: account.bank,
    account_no: account.accountNo,
    account_name: account.accountName,
    promptpay_id: account.promptpayId,
    biller_id: account.billerId,
    provider: account.provider,
    provider_config: account.providerConfig,
    min_amount: formatAmount(account.minAmount),
    max_amount: amount(account.maxAmount),
    hourly_count_limit: account.hourlyCountLimit,
    hourly_amount_limit: amount(account.hourlyAmountLimit),
    daily_count_limit: account.dailyCountLimit,
    daily_amount_limit: amount(account.dailyAmountLimit),
    max_adjustment: account.maxAdjustment,
    priority: account.priority,
    active: account.active,
    statement_layout_id: account.statementLayoutId ?? null,
  }
}

/** The account as `deposit-account:* --json` prints it (its established shape). */
export function presentDepositAccount(account: DepositAccount) {
  const snapshot = depositAccountSnapshot(account)
  return {
    id: account.id,
    group: snapshot.deposit_group,
    channel: snapshot.channel,
    bank: snapshot.bank,
    account_no: snapshot.account_no,
    account_name: snapshot.account_name,
    promptpay_id: snapshot.promptpay_id,
    biller_id: snapshot.biller_id,
    provider: snapshot.provider,
    provider_config: snapshot.provider_config,
    min: snapshot.min_amount,
    max: snapshot.max_amount,
    hourly_count: snapshot.hourly_count_limit,
    hourly_amount: snapshot.hourly_amount_limit,
    daily_count: snapshot.daily_count_limit,
    daily_amount: snapshot.daily_amount_limit,
    max_adjustment: snapshot.max_adjustment,
    priority: snapshot.priority,
    active: snapshot.active,
  }
}

/** Where a payment to the account goes: promptpay id, biller id or provider. */
export function describeTarget(account: DepositAccountAttributes) {
  if (account.channel === 'qr') {
    return account.billerId ? `biller ${account.billerId}` : `promptpay ${account.promptpayId}`
  }
  if (account.channel === 'external') return `provider ${account.provider}`
  return 'bank transfer'
}

/** "min 20.00, max 50000.00, hour 10 orders, day 100000.00 THB": only the limits that are set. */
export function describeLimits(account: DepositAccountAttributes) {
  const parts = [`min ${formatAmount(account.minAmount)}`]
  if (account.maxAmount !== null) parts.push(`max ${formatAmount(account.maxAmount)}`)
  const period = (name: string, count: number | null, amount: number | null) => {
    if (count !== null) parts.push(`${name} ${count} orders`)
    if (amount !== null) parts.push(`${name} ${formatAmount(amount)} THB`)
  }
  period('hour', account.hourlyCountLimit, account.hourlyAmountLimit)
  period('day', account.dailyCountLimit, account.dailyAmountLimit)
  return parts.join(', ')
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

/*
 * Four eyes on the pool (docs/decisions.md, "Four eyes: the deposit-account
 * pool"): a change that could send customers' money somewhere else, or more
 * of it to an account, waits for a second admin; one that can only stop
 * money applies at once.
 */

type Snapshot = ReturnType<typeof depositAccountSnapshot>
type SnapshotField = keyof Snapshot

/** Limits whose lower value (or a value where there was none: unlimited) takes fewer orders. */
const CEILINGS: readonly string[] = [
  'max_amount',
  'hourly_count_limit',
  'hourly_amount_limit',
  'daily_count_limit',
  'daily_amount_limit',
  'max_adjustment',
]

/**
 * Whether changing `field` of an account from `before` to `after` (snapshot
 * values) can only stop money: deactivating it, raising its smallest order
 * amount, lowering a limit or setting one where there was none. Everything
 * else (where money goes, who it is shown to, priority, group, a higher or
 * removed limit, activating) is a change for a second admin.
 */
export function onlyStopsMoney(field: string, before: unknown, after: unknown) {
  if (field === 'active') return after === false
  if (field === 'min_amount') return Number(after) > Number(before)
  if (CEILINGS.includes(field)) {
    return after !== null && (before === null || Number(after) < Number(before))
  }
  return false
}

/** `base` with the named fields (input names) taken from `from`. */
export function withFields(
  base: DepositAccountAttributes,
  from: DepositAccountAttributes,
  fields: readonly string[]
): DepositAccountAttributes {
  const next = attributesOf(base)
  for (const field of fields) {
    const property = PROPERTIES[field as Field]
    if (property) (next as Record<string, unknown>)[property] = from[property]
  }
  return next
}

/**
 * The named fields of an account as the actions' input takes them again
 * (amounts as THB text, "none" for a cleared setting): what an approval
 * request stores, validated again when it is approved.
 */
export function storedInputOf(account: DepositAccountAttributes, fields: readonly string[]) {
  const snapshot = depositAccountSnapshot(account)
  return Object.fromEntries(
    fields.map((field) => {
      const value = snapshot[field as SnapshotField]
      return [field, value === null ? 'none' : value]
    })
  )
}

/**
 * The named fields of an account as the request card shows them: THB as
 * "50,000.00", "unlimited" for a limit not set, on/off, JSON settings as
 * text. Fields without a value (a PromptPay id on a transfer account) are
 * left out unless `keepEmpty`.
 */
export function displayAccountFields(
  account: DepositAccountAttributes,
  fields: readonly string[],
  keepEmpty = true
) {
  // The audit snapshot, its amounts with thousands separators (from the
  // satang, never re-parsed), its settings as text and its switch as on/off.
  const thb = (satang: number | null) => (satang === null ? null : formatThb(satang))
  const values: Record<string, unknown> = {
    ...depositAccountSnapshot(account),
    provider_config: account.providerConfig ? JSON.stringify(account.providerConfig) : null,
    min_amount: formatThb(account.minAmount),
    max_amount: thb(account.maxAmount),
    hourly_amount_limit: thb(account.hourlyAmountLimit),
    daily_amount_limit: thb(account.dailyAmountLimit),
    active: account.active ? 'on' : 'off',
    statement_layout_id:
      account.statementLayoutId === null || account.statementLayoutId === undefined
        ? null
        : (layoutNames.get(account.statementLayoutId) ?? `#${account.statementLayoutId}`),
  }
  const shown: Record<string, unknown> = {}
  for (const field of fields) {
    const value = values[field]
    if (value === null || value === undefined) {
      if (!keepEmpty) continue
      shown[field] = CEILINGS.includes(field) ? 'unlimited' : 'none'
    } else {
      shown[field] = value
    }
  }
  return shown
}

/** Every field of an account, in the order the forms show them. */
export const ACCOUNT_FIELD_NAMES: readonly string[] = Object.keys(PROPERTIES)

/**
 * What identifies an account not yet in the pool, for its approval request
 * (one pending request per new account): channel, bank account and where
 * the money goes ("qr KBANK 1234567890 0812345678").
 */
export function newAccountKey(account: DepositAccountAttributes) {
  const where =
    account.channel === 'qr'
      ? (account.promptpayId ?? account.billerId)
      : account.channel === 'external'
        ? account.provider
        : null
  return [account.channel, account.bank, account.accountNo, where]
    .filter(Boolean)
    .join(' ')
    .slice(0, 64)
}

/** "qr KBANK 1234567890 (promptpay 0812345678) in group shop-pool", for messages. */
export function describeNewAccount(account: DepositAccountAttributes) {
  return `${account.channel} ${account.bank} ${account.accountNo} (${describeTarget(account)}) in group ${account.depositGroup}`
}
