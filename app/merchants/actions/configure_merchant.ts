import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Merchant from '#merchants/models/merchant'
import DepositAccount from '#payments/models/deposit_account'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import {
  MAX_BPS,
  MERCHANT_MESSAGES,
  ORDER_TTL_RANGE,
  depositGroup,
  lockMerchant,
  merchantSnapshot,
  merchantTarget,
  merchantWarnings,
  payoutRoute,
  wholeNumber,
} from '#merchants/merchant_rules'
import { changedValues, recordAudit } from '#core/audit'
import { formatAmount, formatThb, parseAmount } from '#core/money'
import {
  ActionError,
  clearable,
  onOff,
  thbAmount,
  validateInput,
  type FieldError,
} from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const configureMerchantValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    /** suspended: every API call fails authentication. */
    status: vine.enum(['active', 'suspended'] as const).optional(),
    /** The group of deposit accounts the payments draw from; "none" removes it. */
    deposit_group: clearable(depositGroup()).optional(),
    /** The payout connector; "none" removes it. */
    payout_route: clearable(vine.any().use(payoutRoute())).optional(),
    payment_enabled: vine.any().use(onOff()).optional(),
    withdraw_enabled: vine.any().use(onOff()).optional(),
    settlement_enabled: vine.any().use(onOff()).optional(),
    order_ttl_seconds: wholeNumber(ORDER_TTL_RANGE).optional(),
    slip_upload_wait_seconds: wholeNumber([0, 86_400]).optional(),
    payment_fee_rate_bps: wholeNumber([0, MAX_BPS]).optional(),
    withdraw_fee_rate_bps: wholeNumber([0, MAX_BPS]).optional(),
    withdraw_fee_flat: vine
      .any()
      .use(thbAmount({ allowZero: true }))
      .optional(),
    settlement_fee_flat: vine
      .any()
      .use(thbAmount({ allowZero: true }))
      .optional(),
    withdraw_min: vine.any().use(thbAmount({})).optional(),
    /** "none"/"unlimited": no upper limit. */
    withdraw_max: clearable(vine.any().use(thbAmount({}))).optional(),
    settlement_min: vine.any().use(thbAmount({})).optional(),
    settlement_max: vine.any().use(thbAmount({})).optional(),
    /** Refuse a second withdrawal to the same account while one is open. */
    withdraw_duplicate_check: vine.any().use(onOff()).optional(),
    /** Merchant API requests per second; "none": the gateway default. */
    api_rate_limit: clearable(wholeNumber([1, 100_000])).optional(),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

/** Input field → Merchant property, for the settings this action changes. */
const COLUMNS = {
  status: 'status',
  deposit_group: 'depositGroup',
  payout_route: 'payoutRoute',
  payment_enabled: 'paymentEnabled',
  withdraw_enabled: 'withdrawEnabled',
  settlement_enabled: 'settlementEnabled',
  order_ttl_seconds: 'orderTtlSeconds',
  slip_upload_wait_seconds: 'slipUploadWaitSeconds',
  payment_fee_rate_bps: 'paymentFeeRateBps',
  withdraw_fee_rate_bps: 'withdrawFeeRateBps',
  withdraw_fee_flat: 'withdrawFeeFlat',
  settlement_fee_flat: 'settlementFeeFlat',
  withdraw_min: 'withdrawMin',
  withdraw_max: 'withdrawMax',
  settlement_min: 'settlementMin',
  settlement_max: 'settlementMax',
  withdraw_duplicate_check: 'withdrawDuplicateCheck',
  api_rate_limit: 'apiRateLimit',
} as const satisfies Record<string, keyof Merchant>

/**
 * The settings that decide where money goes or how much of it, and when a
 * change of one needs a second admin: a payout route set or changed, any fee
 * change, a limit widened (a maximum raised or removed, a minimum lowered),
 * a permission switched on and a suspended merchant activated. What can only
 * stop money (a route removed, a limit narrowed, a permission off, a
 * suspension) applies at once, as do the deposit group (the pool's own
 * accounts), the order TTL, the slip wait, the duplicate check and the rate
 * limit.
 */
const FOUR_EYES = {
  status: (_before, after) => after === 'active',
  payout_route: (_before, after) => after !== null,
  payment_enabled: (_before, after) => after === true,
  withdraw_enabled: (_before, after) => after === true,
  settlement_enabled: (_before, after) => after === true,
  payment_fee_rate_bps: () => true,
  withdraw_fee_rate_bps: () => true,
  withdraw_fee_flat: () => true,
  settlement_fee_flat: () => true,
  withdraw_min: (before, after) => after < before,
  withdraw_max: (before, after) => after === null || (before !== null && after > before),
  settlement_min: (before, after) => after < before,
  settlement_max: (before, after) => after > before,
} satisfies Partial<Record<keyof typeof COLUMNS, (before: any, after: any) => boolean>>
type FourEyesField = keyof typeof FOUR_EYES
const LIMITS = ['withdraw_min', 'withdraw_max', 'settlement_min', 'settlement_max'] as const

export const MERCHANT_SETTINGS_ACTION = 'merchant.configure'
export const MERCHANT_SETTINGS_KIND = 'merchant_settings'

/**
 * Changes a merchant's settings: status (suspend/activate), deposit group,
 * payout route, permissions, order TTL, fees, limits, rate limit. Only the
 * fields given change. Returns the merchant, the names of the settings that
 * changed (none: nothing written or audited), the approval request opened
 * (or null) and warnings about settings that make the merchant's calls fail.
 *
 * In the back-office the money-directing part of the change (FOUR_EYES)
 * opens one approval request that another admin carries out as stored, and
 * the rest is saved at once; from the command line everything applies at
 * once and the money-directing part is recorded as a break-glass use.
 */
export async function configureMerchant(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(configureMerchantValidator, input, MERCHANT_MESSAGES)
  const result = await inTransaction(async (trx) => {
    const merchant = await lockMerchant(trx, data.merchant_id)
    const before = merchantSnapshot(merchant)
    const current = { ...merchant.$attributes }
    for (const [field, property] of Object.entries(COLUMNS)) {
      const value = data[field as keyof typeof COLUMNS]
      if (value !== undefined) merchant.merge({ [property]: value })
    }
    const errors = limitErrors(merchant, data)
    if (errors.length > 0) throw new ActionError(errors)

    // The money-directing values asked, set back to what they are until applied.
    const asked: Partial<Record<FourEyesField, unknown>> = {}
    for (const [field, loosens] of Object.entries(FOUR_EYES) as Array<
      [FourEyesField, (before: unknown, after: unknown) => boolean]
    >) {
      const property = COLUMNS[field]
      const was = current[property]
      const value = data[field]
      if (value === undefined || value === was || !loosens(was, value)) continue
      asked[field] = value
      merchant.merge({ [property]: was })
    }
    // A narrowed limit whose counterpart waits must wait with it (min ≤ max holds throughout).
    if (limitErrors(merchant, data).length > 0) {
      for (const field of LIMITS) {
        const value = data[field]
        if (value === undefined || value === current[COLUMNS[field]]) continue
        asked[field] = value
        merchant.merge({ [COLUMNS[field]]: current[COLUMNS[field]] })
      }
    }

    let request: ApprovalRequest | null = null
    if (Object.keys(asked).length > 0) {
      const stored: MerchantSettingsData = {
        merchant_id: merchant.merchantId,
        ...(asked as Partial<MerchantSettingsData>),
        ...(data.comment ? { comment: data.comment } : {}),
      }
      const prepared = { merchant, current: before, target: merchantTarget(merchant) }
      const outcome = await askOrApplyFromShell(trx, {
        action: MERCHANT_SETTINGS_ACTION,
        target: prepared.target,
        input: stored,
        prepared,
        actor,
        reason: { comment: data.comment },
        field: Object.keys(asked)[0],
        summary: describeSettings(stored, before),
        run: async () => {
          for (const [field, value] of Object.entries(asked)) {
            merchant.merge({ [COLUMNS[field as FourEyesField]]: value })
          }
        },
      })
      request = outcome.request
    }

    const diff = changedValues(before, merchantSnapshot(merchant))
    if (diff.changed.length > 0) {
      await merchant.useTransaction(trx).save()
      await recordAudit(trx, actor, {
        action: 'merchant.configure',
        target: { type: 'merchant', id: merchant.merchantId },
        before: diff.before,
        after: diff.after,
        reason: { comment: data.comment },
      })
    }
    return { merchant, changed: diff.changed, request }
  })
  return { ...result, warnings: await merchantWarnings(result.merchant) }
}

/* The money-directing settings, as an approval request stores and runs them. */

const satang = () => vine.number().withoutDecimals().min(0)
const settingsSchema = vine.object({
  merchant_id: vine.string().trim(),
  status: vine.enum(['active'] as const).optional(),
  payout_route: vine.any().use(payoutRoute()).optional(),
  payment_enabled: vine.boolean().optional(),
  withdraw_enabled: vine.boolean().optional(),
  settlement_enabled: vine.boolean().optional(),
  payment_fee_rate_bps: wholeNumber([0, MAX_BPS]).optional(),
  withdraw_fee_rate_bps: wholeNumber([0, MAX_BPS]).optional(),
  /** Satang, as validated when the request was opened. */
  withdraw_fee_flat: satang().optional(),
  settlement_fee_flat: satang().optional(),
  withdraw_min: satang().optional(),
  /** null: no upper limit. */
  withdraw_max: satang().nullable().optional(),
  settlement_min: satang().optional(),
  settlement_max: satang().optional(),
  comment: vine.string().trim().maxLength(500).optional(),
})
export const merchantSettingsValidator = vine.compile(settingsSchema)
export type MerchantSettingsData = Infer<typeof settingsSchema>

const AMOUNTS = new Set([
  'withdraw_fee_flat',
  'settlement_fee_flat',
  'withdraw_min',
  'withdraw_max',
  'settlement_min',
  'settlement_max',
])

/** A setting as the request card shows it: "1,000.00 THB", "150 bps", "on". */
function shown(field: string, value: unknown) {
  if (value === null || value === undefined) {
    return field === 'withdraw_max' ? 'no limit' : 'none'
  }
  if (typeof value === 'boolean') return value ? 'on' : 'off'
  if (AMOUNTS.has(field)) {
    const amount = typeof value === 'number' ? value : parseAmount(value)
    return amount === null ? String(value) : `${formatThb(amount)} THB`
  }
  if (field.endsWith('_bps')) return `${value} bps`
  return String(value)
}

const askedFields = (data: MerchantSettingsData) =>
  (Object.keys(FOUR_EYES) as FourEyesField[]).filter((field) => data[field] !== undefined)

function settingsChange(data: MerchantSettingsData, current: ReturnType<typeof merchantSnapshot>) {
  const before: Record<string, string> = {}
  const after: Record<string, string> = {}
  for (const field of askedFields(data)) {
    before[field] = shown(field, current[field])
    after[field] = shown(field, data[field])
  }
  return { before, after }
}

function describeSettings(
  data: MerchantSettingsData,
  current?: ReturnType<typeof merchantSnapshot>
) {
  const parts = askedFields(data).map((field) => {
    const to = shown(field, data[field])
    return current ? `${field} ${shown(field, current[field])} → ${to}` : `${field} ${to}`
  })
  return `set ${parts.join(', ')} for merchant ${data.merchant_id}`
}

async function prepareSettings(trx: TransactionClientContract, data: MerchantSettingsData) {
  const merchant = await lockMerchant(trx, data.merchant_id)
  const current = merchantSnapshot(merchant)
  const changes = askedFields(data).filter((field) => data[field] !== merchant[COLUMNS[field]])
  if (changes.length === 0) {
    throw ActionError.general(
      `merchant ${data.merchant_id} already has ${describeSettings(data)
        .replace(/^set /, '')
        .replace(/ for merchant .*$/, '')}: nothing left to change`
    )
  }
  return { merchant, current, target: merchantTarget(merchant) }
}
type SettingsPrepared = Awaited<ReturnType<typeof prepareSettings>>

/** On approval: the stored values, checked against the limits as they are now, saved and audited. */
async function runSettings(
  trx: TransactionClientContract,
  prepared: SettingsPrepared,
  data: MerchantSettingsData,
  context: RunContext
) {
  const { merchant, current } = prepared
  for (const field of askedFields(data)) {
    merchant.merge({ [COLUMNS[field]]: data[field] })
  }
  const errors = limitErrors(merchant, data)
  if (errors.length > 0) throw new ActionError(errors)
  const diff = changedValues(current, merchantSnapshot(merchant))
  await merchant.useTransaction(trx).save()
  await recordAudit(trx, context.actor, {
    action: 'merchant.configure',
    target: { type: 'merchant', id: merchant.merchantId },
    before: diff.before,
    after: diff.after,
    reason: { comment: data.comment },
    details: approvalDetails(context.request),
  })
  return diff.after
}

registerApprovableAction<MerchantSettingsData, SettingsPrepared>({
  name: MERCHANT_SETTINGS_ACTION,
  kind: MERCHANT_SETTINGS_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) => describeSettings(data),
  change: (data, prepared) => settingsChange(data, prepared.current),
  validate: (input) => validateInput(merchantSettingsValidator, input, MERCHANT_MESSAGES),
  prepare: (trx, data) => prepareSettings(trx, data),
  run: (trx, prepared, data, context) => runSettings(trx, prepared, data, context),
})

/**
 * Minimums above maximums, reported beside the field the operator changed
 * (the maximum when both or neither were given).
 */
function limitErrors(merchant: Merchant, given: Record<string, unknown>) {
  const errors: FieldError[] = []
  const check = (kind: 'withdraw' | 'settlement', min: number, max: number | null) => {
    if (max === null || min <= max) return
    const field = given[`${kind}_min`] !== undefined && given[`${kind}_max`] === undefined
    errors.push({
      field: field ? `${kind}_min` : `${kind}_max`,
      message: `${kind}_min ${formatAmount(min)} is above ${kind}_max ${formatAmount(max)}`,
    })
  }
  check('withdraw', merchant.withdrawMin, merchant.withdrawMax)
  check('settlement', merchant.settlementMin, merchant.settlementMax)
  return errors
}

/**
 * The back-office's settings form: its select offers the groups the pool's
 * accounts have, so a posted group no deposit account has (and that is not
 * the merchant's own) is refused before anything else; the rest is
 * configureMerchant. The command line may name a group before its accounts
 * exist (it is warned).
 */
export async function configureMerchantSettings(input: Record<string, unknown>, actor: Actor) {
  const group = typeof input.deposit_group === 'string' ? input.deposit_group.trim() : ''
  if (group !== '' && group !== 'none') {
    const merchant = await Merchant.findBy('merchant_id', String(input.merchant_id ?? ''))
    if (merchant?.depositGroup !== group && !(await poolGroupNames()).includes(group)) {
      throw ActionError.field(
        'deposit_group',
        `deposit_group: no deposit account is in group "${group}"; choose one of the pool's groups (deposit-account:create adds one)`
      )
    }
  }
  return configureMerchant(input, actor)
}

/** The deposit groups the pool's accounts have (compared as typed, not by the collation). */
async function poolGroupNames() {
  const rows = await DepositAccount.query().distinct('deposit_group')
  return rows.map((row) => String(row.depositGroup))
}

const statusChangeValidator = vine.compile(
  vine.object({
    confirm: vine.accepted(),
    comment: vine.string().trim().minLength(1),
  })
)
const STATUS_CHANGE_MESSAGES = {
  'confirm.required': 'tick the box to confirm',
  'confirm.accepted': 'tick the box to confirm',
  'comment.required': 'give the reason (kept in the audit log)',
  'comment.minLength': 'give the reason (kept in the audit log)',
}

/**
 * Suspends or activates a merchant from the back-office: confirmed, with
 * the reason kept in the audit log; the rest is configureMerchant.
 */
export async function changeMerchantStatus(input: Record<string, unknown>, actor: Actor) {
  await validateInput(statusChangeValidator, input, STATUS_CHANGE_MESSAGES)
  return configureMerchant(
    { merchant_id: input.merchant_id, status: input.status, comment: input.comment },
    actor
  )
}
