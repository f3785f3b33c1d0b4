import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import DepositAccount, { type DepositChannel } from '#models/deposit_account'
import { isBankCode } from '#services/banks'
import { formatAmount } from '#services/money'
import {
  amountOf,
  integerOf,
  isCleared,
  OperatorInputError,
  snake,
  type Clearable,
} from '#services/operator_input'

export { OperatorInputError, type Clearable }
import { recordAudit } from '#services/audit'
import { normalizeProxy } from '#deposits/promptpay_qr'
import { depositProvider } from '#deposits/providers/registry'

/**
 * Creating, changing and listing the deposit-account pool (operator
 * commands). Input arrives as the operator typed it; everything is parsed and
 * checked here, and every error is reported in one OperatorInputError.
 */

/**
 * Changes as typed by an operator. undefined leaves a field as it is (or at
 * its default on create); Clearable fields clear with false/null/"none".
 */
export interface DepositAccountChanges {
  group?: string
  channel?: string
  bank?: string
  accountNo?: string
  accountName?: string
  promptpayId?: Clearable
  billerId?: Clearable
  provider?: Clearable
  /** JSON object text, e.g. '{"fail":true}' for the sandbox provider. */
  providerConfig?: Clearable
  min?: string | number
  max?: Clearable
  hourlyCount?: Clearable
  hourlyAmount?: Clearable
  dailyCount?: Clearable
  dailyAmount?: Clearable
  maxAdjustment?: string | number
  priority?: string | number
  active?: boolean
}

/** The options of deposit-account:create / :update, by their property names. */
const OPTION_FIELDS = [
  'group',
  'channel',
  'bank',
  'accountNo',
  'accountName',
  'promptpayId',
  'billerId',
  'provider',
  'providerConfig',
  'min',
  'max',
  'hourlyCount',
  'hourlyAmount',
  'dailyCount',
  'dailyAmount',
  'maxAdjustment',
  'priority',
] as const satisfies ReadonlyArray<keyof DepositAccountChanges>

/** The changes an operator typed, read off a command's parsed flags. */
export function depositAccountChangesFrom(
  flags: Partial<Record<(typeof OPTION_FIELDS)[number], unknown>>
): DepositAccountChanges {
  return Object.fromEntries(
    OPTION_FIELDS.map((field) => [field, flags[field]])
  ) as DepositAccountChanges
}

interface AccountState {
  depositGroup: string
  channel: DepositChannel
  bank: string
  accountNo: string
  accountName: string
  promptpayId: string | null
  billerId: string | null
  provider: string | null
  providerConfig: Record<string, unknown> | null
  minAmount: number
  maxAmount: number | null
  hourlyCountLimit: number | null
  hourlyAmountLimit: number | null
  dailyCountLimit: number | null
  dailyAmountLimit: number | null
  maxAdjustment: number
  priority: number
  active: boolean
}

const STATE_FIELDS: Array<keyof AccountState> = [
  'depositGroup',
  'channel',
  'bank',
  'accountNo',
  'accountName',
  'promptpayId',
  'billerId',
  'provider',
  'providerConfig',
  'minAmount',
  'maxAmount',
  'hourlyCountLimit',
  'hourlyAmountLimit',
  'dailyCountLimit',
  'dailyAmountLimit',
  'maxAdjustment',
  'priority',
  'active',
]

export const CHANNELS: DepositChannel[] = ['qr', 'transfer', 'external']
export const DEPOSIT_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
export const DEPOSIT_GROUP_RULE =
  'deposit group: 1-64 letters, digits, ".", "-" or "_", starting with a letter or digit'

const DEFAULT_MIN_AMOUNT = 2000 // 20.00 THB, the API's smallest payment
const DEFAULT_MAX_ADJUSTMENT = 999
const MAX_ADJUSTMENT_LIMIT = 9999 // 99.99 THB
const MAX_PRIORITY = 1_000_000
const MAX_COUNT_LIMIT = 4_294_967_295 // unsigned INT column
const BILLER_ID = /^\d{15}$/

export function isDepositGroup(value: string) {
  return DEPOSIT_GROUP_PATTERN.test(value)
}

export async function createDepositAccount(changes: DepositAccountChanges, actor: string) {
  const state = resolveState(null, changes)
  return db.transaction(async (trx) => {
    await assertNotInPoolTwice(trx, state, null)
    const account = await DepositAccount.create(state, { client: trx })
    await recordAudit(
      {
        actor,
        action: 'deposit_account.create',
        subjectType: 'deposit_account',
        subjectId: String(account.id),
        details: auditSnapshot(state),
      },
      trx
    )
    return account
  })
}

/**
 * Applies `changes` to account `id` and returns it with the names of the
 * columns that changed (none: nothing is written or audited).
 */
export async function updateDepositAccount(
  id: number | string,
  changes: DepositAccountChanges,
  actor: string
): Promise<{ account: DepositAccount; changed: string[] }> {
  const accountId = Number(id)
  if (!Number.isSafeInteger(accountId) || accountId <= 0) {
    throw new OperatorInputError(`deposit account id must be a positive whole number, not "${id}"`)
  }
  return db.transaction(async (trx) => {
    const account = await DepositAccount.query({ client: trx })
      .where('id', accountId)
      .forUpdate()
      .first()
    if (!account) throw new OperatorInputError(`No deposit account with id ${accountId}`)

    const before = stateOf(account)
    const after = resolveState(before, changes)
    const diff: Record<string, { from: unknown; to: unknown }> = {}
    for (const field of STATE_FIELDS) {
      if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) {
        diff[snake(field)] = { from: auditValue(before[field]), to: auditValue(after[field]) }
      }
    }
    const changed = Object.keys(diff)
    if (changed.length === 0) return { account, changed }

    await assertNotInPoolTwice(trx, after, account.id)
    account.merge(after)
    account.useTransaction(trx)
    await account.save()
    await recordAudit(
      {
        actor,
        action: 'deposit_account.update',
        subjectType: 'deposit_account',
        subjectId: String(account.id),
        details: diff,
      },
      trx
    )
    return { account, changed }
  })
}

export async function listDepositAccounts(group?: string) {
  const query = DepositAccount.query()
    .orderBy('deposit_group')
    .orderBy('priority', 'desc')
    .orderBy('id')
  if (group !== undefined) query.where('deposit_group', group)
  return query
}

/** Where a payment to the account goes: promptpay id, biller id or provider. */
export function describeTarget(account: DepositAccount) {
  if (account.channel === 'qr') {
    return account.billerId ? `biller ${account.billerId}` : `promptpay ${account.promptpayId}`
  }
  if (account.channel === 'external') return `provider ${account.provider}`
  return 'bank transfer'
}

/** "min 20.00, max 50000.00, hour 10 orders, day 100000.00 THB": only the limits that are set. */
export function describeLimits(account: DepositAccount) {
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

/** The account as JSON for `--json` output; amounts as 2-decimal strings, null is unlimited. */
export function presentDepositAccount(account: DepositAccount) {
  const amount = (value: number | null) => (value === null ? null : formatAmount(value))
  return {
    id: account.id,
    group: account.depositGroup,
    channel: account.channel,
    bank: account.bank,
    account_no: account.accountNo,
    account_name: account.accountName,
    promptpay_id: account.promptpayId,
    biller_id: account.billerId,
    provider: account.provider,
    provider_config: account.providerConfig,
    min: formatAmount(account.minAmount),
    max: amount(account.maxAmount),
    hourly_count: account.hourlyCountLimit,
    hourly_amount: amount(account.hourlyAmountLimit),
    daily_count: account.dailyCountLimit,
    daily_amount: amount(account.dailyAmountLimit),
    max_adjustment: account.maxAdjustment,
    priority: account.priority,
    active: account.active,
  }
}

function stateOf(account: DepositAccount): AccountState {
  const state = {} as Record<keyof AccountState, unknown>
  for (const field of STATE_FIELDS) state[field] = account[field]
  return state as AccountState
}

/**
 * The account that results from `changes` over `current` (null: a new
 * account, from the defaults). Throws one error naming every problem.
 */
function resolveState(current: AccountState | null, changes: DepositAccountChanges): AccountState {
  const errors: string[] = []
  const state: AccountState = current
    ? { ...current }
    : {
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
      }
  const parse = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn()
    } catch (error) {
      if (!(error instanceof OperatorInputError)) throw error
      errors.push(error.message)
      return fallback
    }
  }

  if (!current) {
    const missing = (['group', 'channel', 'bank', 'accountNo', 'accountName'] as const)
      .filter((key) => changes[key] === undefined)
      .map((key) => `--${dashed(key)}`)
    if (missing.length > 0) errors.push(`missing ${missing.join(', ')}`)
  }

  if (changes.group !== undefined) {
    const group = String(changes.group).trim()
    if (isDepositGroup(group)) state.depositGroup = group
    else errors.push(DEPOSIT_GROUP_RULE)
  }
  const previousChannel = state.channel
  if (changes.channel !== undefined) {
    const channel = String(changes.channel).trim().toLowerCase() as DepositChannel
    if (CHANNELS.includes(channel)) state.channel = channel
    else errors.push(`--channel must be one of ${CHANNELS.join(', ')}, not "${changes.channel}"`)
  }
  if (changes.bank !== undefined) {
    const bank = String(changes.bank).trim().toUpperCase()
    if (isBankCode(bank)) state.bank = bank
    else errors.push(`unknown bank "${changes.bank}" (see the bank codes of the merchant API)`)
  }
  if (changes.accountNo !== undefined) {
    const digits = String(changes.accountNo).replace(/[\s-]/g, '')
    if (/^\d{10,15}$/.test(digits)) state.accountNo = digits
    else errors.push('--account-no must be 10 to 15 digits (spaces and dashes are ignored)')
  }
  if (changes.accountName !== undefined) {
    const name = String(changes.accountName).trim()
    if (name.length >= 1 && name.length <= 120) state.accountName = name
    else errors.push('--account-name must be 1 to 120 characters')
  }

  // QR accounts carry a PromptPay proxy or a biller id; giving one replaces the other.
  const promptpayGiven = changes.promptpayId !== undefined
  const billerGiven = changes.billerId !== undefined
  if (promptpayGiven) state.promptpayId = parse(() => promptpayIdOf(changes.promptpayId!), null)
  if (billerGiven) state.billerId = parse(() => billerIdOf(changes.billerId!), null)
  if (promptpayGiven && !billerGiven && state.promptpayId !== null) state.billerId = null
  if (billerGiven && !promptpayGiven && state.billerId !== null) state.promptpayId = null

  const providerGiven = changes.provider !== undefined || changes.providerConfig !== undefined
  if (changes.provider !== undefined) {
    state.provider = parse(() => providerOf(changes.provider!), null)
  }
  if (changes.providerConfig !== undefined) {
    state.providerConfig = parse(() => providerConfigOf(changes.providerConfig!), null)
  }

  // Moving an account to another channel drops what only the old channel uses.
  if (state.channel !== previousChannel) {
    if (state.channel !== 'qr' && !promptpayGiven && !billerGiven) {
      state.promptpayId = null
      state.billerId = null
    }
    if (state.channel !== 'external' && !providerGiven) {
      state.provider = null
      state.providerConfig = null
    }
  }

  if (changes.min !== undefined) {
    state.minAmount = parse(() => amountOf('--min', changes.min!), state.minAmount)
  }
  if (changes.max !== undefined) {
    state.maxAmount = parse(() => limitOf('--max', changes.max!, amountOf), state.maxAmount)
  }
  if (changes.hourlyCount !== undefined) {
    state.hourlyCountLimit = parse(
      () => limitOf('--hourly-count', changes.hourlyCount!, countOf),
      state.hourlyCountLimit
    )
  }
  if (changes.hourlyAmount !== undefined) {
    state.hourlyAmountLimit = parse(
      () => limitOf('--hourly-amount', changes.hourlyAmount!, amountOf),
      state.hourlyAmountLimit
    )
  }
  if (changes.dailyCount !== undefined) {
    state.dailyCountLimit = parse(
      () => limitOf('--daily-count', changes.dailyCount!, countOf),
      state.dailyCountLimit
    )
  }
  if (changes.dailyAmount !== undefined) {
    state.dailyAmountLimit = parse(
      () => limitOf('--daily-amount', changes.dailyAmount!, amountOf),
      state.dailyAmountLimit
    )
  }
  if (changes.maxAdjustment !== undefined) {
    state.maxAdjustment = parse(
      () => integerOf('--max-adjustment', changes.maxAdjustment!, 0, MAX_ADJUSTMENT_LIMIT),
      state.maxAdjustment
    )
  }
  if (changes.priority !== undefined) {
    state.priority = parse(
      () => integerOf('--priority', changes.priority!, -MAX_PRIORITY, MAX_PRIORITY),
      state.priority
    )
  }
  if (changes.active !== undefined) state.active = changes.active

  if (errors.length === 0) errors.push(...consistencyErrors(state))
  if (errors.length > 0) throw new OperatorInputError(errors.join('\n'))
  return state
}

/** Rules that involve several fields, checked on the resulting account. */
function consistencyErrors(state: AccountState) {
  const errors: string[] = []
  if (state.channel === 'qr') {
    if (state.promptpayId && state.billerId) {
      errors.push('a QR account has either --promptpay-id or --biller-id, not both')
    } else if (!state.promptpayId && !state.billerId) {
      errors.push(
        '--channel qr needs --promptpay-id (mobile number, 13-digit national/tax id or 15-digit e-wallet id) or --biller-id (15 digits, bill payment)'
      )
    }
  } else if (state.promptpayId || state.billerId) {
    errors.push('--promptpay-id and --biller-id belong to --channel qr accounts only')
  }
  if (state.channel === 'external') {
    if (!state.provider) errors.push('--channel external needs --provider (e.g. sandbox)')
  } else if (state.provider || state.providerConfig) {
    errors.push('--provider and --provider-config belong to --channel external accounts only')
  }
  if (state.maxAmount !== null && state.minAmount > state.maxAmount) {
    errors.push(
      `--min ${formatAmount(state.minAmount)} is above --max ${formatAmount(state.maxAmount)}`
    )
  }
  return errors
}

/**
 * transfer_amount slots are unique per deposit account: one real bank account
 * entered twice (on the transfer or PromptPay QR channel) could take two
 * orders with the same amount that no one could tell apart.
 */
async function assertNotInPoolTwice(
  trx: TransactionClientContract,
  state: AccountState,
  selfId: number | null
) {
  if (!matchesByAmount(state)) return
  const others = await DepositAccount.query({ client: trx })
    .where('bank', state.bank)
    .where('account_no', state.accountNo)
    .whereIn('channel', ['qr', 'transfer'])
    .if(selfId !== null, (query) => query.whereNot('id', selfId!))
  const clash = others.find((other) => matchesByAmount(other))
  if (clash) {
    throw new OperatorInputError(
      `${state.bank} ${state.accountNo} is already deposit account ${clash.id} (${clash.channel}, group ${clash.depositGroup}); ` +
        'payments to one bank account are told apart by amount, so it can be in the pool only once ' +
        '(change that account with deposit-account:update instead)'
    )
  }
}

/** Accounts whose payments are matched by transfer_amount (not by reference or provider). */
function matchesByAmount(state: Pick<AccountState, 'channel' | 'billerId'>) {
  return state.channel === 'transfer' || (state.channel === 'qr' && !state.billerId)
}

/** Stored as its digits ("0812345678"); the QR generator normalises it when drawing. */
function promptpayIdOf(value: Clearable): string | null {
  if (isCleared(value)) return null
  const digits = String(value).replace(/\D/g, '')
  try {
    normalizeProxy(digits)
  } catch {
    throw new OperatorInputError(
      `--promptpay-id "${value}" is not a mobile number (0 + 9 digits), a 13-digit national/tax id or a 15-digit e-wallet id`
    )
  }
  return digits
}

function billerIdOf(value: Clearable): string | null {
  if (isCleared(value)) return null
  const text = String(value).trim()
  if (!BILLER_ID.test(text)) {
    throw new OperatorInputError(`--biller-id must be exactly 15 digits, not "${value}"`)
  }
  return text
}

function providerOf(value: Clearable): string | null {
  if (isCleared(value)) return null
  const name = String(value).trim().toLowerCase()
  if (!depositProvider(name)) {
    throw new OperatorInputError(`--provider "${value}" is not a known deposit provider`)
  }
  return name
}

function providerConfigOf(value: Clearable): Record<string, unknown> | null {
  if (isCleared(value)) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(String(value))
  } catch {}
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OperatorInputError('--provider-config must be a JSON object, e.g. \'{"fail":true}\'')
  }
  return parsed as Record<string, unknown>
}

function countOf(flag: string, value: string | number): number {
  return integerOf(flag, value, 1, MAX_COUNT_LIMIT)
}

function limitOf(
  flag: string,
  value: Clearable,
  parseValue: (flag: string, value: string | number) => number
): number | null {
  return isCleared(value) ? null : parseValue(flag, value as string | number)
}

function dashed(key: string) {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
}

function auditValue(value: unknown) {
  return value === undefined ? null : value
}

function auditSnapshot(state: AccountState) {
  return Object.fromEntries(STATE_FIELDS.map((field) => [snake(field), auditValue(state[field])]))
}
