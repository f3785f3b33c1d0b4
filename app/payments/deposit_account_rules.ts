import type DepositAccount from '#payments/models/deposit_account'
import { formatAmount } from '#core/money'
import { ActionError, type FieldError } from '#core/validation'

/**
 * The deposit-account pool's rules on one account, shared by the create and
 * update actions: the account that results from their input, the rules that
 * involve several of its fields, and which changes wait for a second admin.
 */

const DEFAULT_MIN_AMOUNT = 2000 // 20.00 THB, the API's smallest payment
const DEFAULT_MAX_ADJUSTMENT = 999

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

/** Throws every error at once, as one ActionError. */
export function refuseIfAny(errors: FieldError[]) {
  if (errors.length > 0) throw new ActionError(errors)
}

/*
 * Four eyes on the pool (docs/decisions.md, "Four eyes: the deposit-account
 * pool"): a change that could send customers' money somewhere else, or more
 * of it to an account, waits for a second admin; one that can only stop
 * money applies at once.
 */

/** Limits whose lower value (or a value where there was none: unlimited) takes fewer orders. */
export const CEILINGS: readonly string[] = [
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
