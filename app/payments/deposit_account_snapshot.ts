import { formatAmount, formatThb } from '#core/money'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type DepositAccount from '#payments/models/deposit_account'
import { CEILINGS, type DepositAccountAttributes } from '#payments/deposit_account_rules'

/**
 * A deposit account as it is shown and stored for others to read: the audit
 * snapshot, the `deposit-account:*` commands' output and descriptions, and
 * its fields as an approval request stores and shows them.
 */

/**
 * The names of the statement layouts operators defined, by id: what the
 * request card and the forms show for `statement_layout_id`. Loaded by
 * `loadLayoutNames` when an account's change is prepared; the input rule of
 * `statement_layout_id` notes the one it finds.
 */
const layoutNames = new Map<number, string>()

/** Notes the name of a layout just read (the statement_layout_id rule found it). */
export function rememberLayoutName(id: number, name: string) {
  layoutNames.set(id, name)
}

/** Reads every defined layout's name (a handful of rows) for displayAccountFields. */
export async function loadLayoutNames(client: QueryClientContract = db.connection()) {
  const rows = await client.from('statement_layouts').select('id', 'name')
  layoutNames.clear()
  for (const row of rows) layoutNames.set(Number(row.id), String(row.name))
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

type Snapshot = ReturnType<typeof depositAccountSnapshot>
type SnapshotField = keyof Snapshot

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

/** "qr KBANK 1234567890 (promptpay 0812345678) in group shop-pool", for messages. */
export function describeNewAccount(account: DepositAccountAttributes) {
  return `${account.channel} ${account.bank} ${account.accountNo} (${describeTarget(account)}) in group ${account.depositGroup}`
}
