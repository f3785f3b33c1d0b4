import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import db from '@adonisjs/lucid/services/db'
import Merchant from '#models/merchant'
import Platform from '#models/platform'
import DepositAccount from '#models/deposit_account'
import { formatAmount } from '#services/money'
import { recordAudit } from '#services/audit'
import { isValidTimeOfDay } from '#deposits/open_period'
import { DEPOSIT_GROUP_RULE, isDepositGroup } from '#services/deposit_accounts'
import {
  amountOf,
  integerOf,
  isCleared,
  isHostName,
  OperatorInputError,
  snake,
  type Clearable,
} from '#services/operator_input'

export { OperatorInputError }

/**
 * Operator settings of merchants (permissions, deposit group, order TTL,
 * fees, limits) and of platforms (payment page domain, deposit killswitch,
 * open hours). Input arrives as the operator typed it; every problem is
 * reported in one OperatorInputError and nothing is written then.
 */

export interface MerchantSettingsChanges {
  status?: string
  depositGroup?: Clearable
  payoutRoute?: Clearable
  payments?: string | boolean
  withdrawals?: string | boolean
  settlements?: string | boolean
  orderTtl?: string | number
  slipUploadWait?: string | number
  paymentFeeRate?: string | number
  withdrawFeeRate?: string | number
  withdrawFee?: string | number
  settlementFee?: string | number
  withdrawMin?: string | number
  withdrawMax?: Clearable
  settlementMin?: string | number
  settlementMax?: string | number
  withdrawDuplicateCheck?: string | boolean
}

export interface PlatformSettingsChanges {
  name?: string
  paymentPageDomain?: Clearable
  deposits?: string | boolean
  depositHours?: string
  settlementHours?: string
}

export const ORDER_TTL_RANGE = { min: 60, max: 86_400 }
const MAX_BPS = 10_000 // 100 %
const PAYOUT_ROUTE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
// Same rule as platform:create (app/services/onboarding.ts).
const HOURS = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/

type Collect = <T>(fn: () => T) => T | undefined

/** Runs parsers, collecting their OperatorInputErrors instead of stopping at the first. */
function collector(): { errors: string[]; run: Collect } {
  const errors: string[] = []
  const run: Collect = (fn) => {
    try {
      return fn()
    } catch (error) {
      if (!(error instanceof OperatorInputError)) throw error
      errors.push(error.message)
      return undefined
    }
  }
  return { errors, run }
}

/**
 * Applies `changes` to the merchant with public id `merchantId`. Returns the
 * merchant, the changed settings (none: nothing written or audited) and
 * warnings about settings that will make calls fail.
 */
export async function configureMerchant(
  merchantId: string,
  changes: MerchantSettingsChanges,
  actor: string
) {
  const { errors, run } = collector()
  const values: Partial<Merchant> = {}
  const set = <K extends keyof Merchant>(key: K, value: Merchant[K] | undefined) => {
    if (value !== undefined) values[key] = value
  }

  if (changes.status !== undefined) {
    const status = String(changes.status).trim().toLowerCase()
    if (status === 'active' || status === 'suspended') values.status = status
    else errors.push(`--status must be active or suspended, not "${changes.status}"`)
  }
  if (changes.depositGroup !== undefined) {
    set(
      'depositGroup',
      run(() => nameOrNull(changes.depositGroup!, isDepositGroup, DEPOSIT_GROUP_RULE))
    )
  }
  if (changes.payoutRoute !== undefined) {
    set(
      'payoutRoute',
      run(() =>
        nameOrNull(
          changes.payoutRoute!,
          (value) => PAYOUT_ROUTE.test(value) && PAYOUT_CONNECTOR_NAMES.includes(value),
          `payout route: one of ${PAYOUT_CONNECTOR_NAMES.join(', ')}`
        )
      )
    )
  }
  if (changes.payments !== undefined) {
    set(
      'paymentEnabled',
      run(() => onOff('--payments', changes.payments!))
    )
  }
  if (changes.withdrawals !== undefined) {
    set(
      'withdrawEnabled',
      run(() => onOff('--withdrawals', changes.withdrawals!))
    )
  }
  if (changes.settlements !== undefined) {
    set(
      'settlementEnabled',
      run(() => onOff('--settlements', changes.settlements!))
    )
  }
  if (changes.withdrawDuplicateCheck !== undefined) {
    set(
      'withdrawDuplicateCheck',
      run(() => onOff('--withdraw-duplicate-check', changes.withdrawDuplicateCheck!))
    )
  }
  if (changes.orderTtl !== undefined) {
    set(
      'orderTtlSeconds',
      run(() =>
        integerOf('--order-ttl', changes.orderTtl!, ORDER_TTL_RANGE.min, ORDER_TTL_RANGE.max)
      )
    )
  }
  if (changes.slipUploadWait !== undefined) {
    set(
      'slipUploadWaitSeconds',
      run(() => integerOf('--slip-upload-wait', changes.slipUploadWait!, 0, 86_400))
    )
  }
  if (changes.paymentFeeRate !== undefined) {
    set(
      'paymentFeeRateBps',
      run(() => integerOf('--payment-fee-rate', changes.paymentFeeRate!, 0, MAX_BPS))
    )
  }
  if (changes.withdrawFeeRate !== undefined) {
    set(
      'withdrawFeeRateBps',
      run(() => integerOf('--withdraw-fee-rate', changes.withdrawFeeRate!, 0, MAX_BPS))
    )
  }
  if (changes.withdrawFee !== undefined) {
    set(
      'withdrawFeeFlat',
      run(() => amountOf('--withdraw-fee', changes.withdrawFee!, { allowZero: true }))
    )
  }
  if (changes.settlementFee !== undefined) {
    set(
      'settlementFeeFlat',
      run(() => amountOf('--settlement-fee', changes.settlementFee!, { allowZero: true }))
    )
  }
  if (changes.withdrawMin !== undefined) {
    set(
      'withdrawMin',
      run(() => amountOf('--withdraw-min', changes.withdrawMin!))
    )
  }
  if (changes.withdrawMax !== undefined) {
    set(
      'withdrawMax',
      run(() =>
        isCleared(changes.withdrawMax!)
          ? null
          : amountOf('--withdraw-max', changes.withdrawMax as string | number)
      )
    )
  }
  if (changes.settlementMin !== undefined) {
    set(
      'settlementMin',
      run(() => amountOf('--settlement-min', changes.settlementMin!))
    )
  }
  if (changes.settlementMax !== undefined) {
    set(
      'settlementMax',
      run(() => amountOf('--settlement-max', changes.settlementMax!))
    )
  }
  if (errors.length > 0) throw new OperatorInputError(errors.join('\n'))

  return db
    .transaction(async (trx) => {
      const merchant = await Merchant.query({ client: trx })
        .where('merchant_id', merchantId)
        .forUpdate()
        .first()
      if (!merchant) throw new OperatorInputError(`No merchant with merchant_id ${merchantId}`)

      const after = { ...merchant.$attributes, ...values } as Merchant
      if (after.withdrawMax !== null && after.withdrawMin > after.withdrawMax) {
        errors.push(
          `withdraw min ${formatAmount(after.withdrawMin)} is above withdraw max ${formatAmount(after.withdrawMax)}`
        )
      }
      if (after.settlementMin > after.settlementMax) {
        errors.push(
          `settlement min ${formatAmount(after.settlementMin)} is above settlement max ${formatAmount(after.settlementMax)}`
        )
      }
      if (errors.length > 0) throw new OperatorInputError(errors.join('\n'))

      const diff: Record<string, { from: unknown; to: unknown }> = {}
      for (const [key, value] of Object.entries(values)) {
        const before = merchant.$attributes[key]
        if (before !== value) diff[snake(key)] = { from: before ?? null, to: value ?? null }
      }
      const changed = Object.keys(diff)
      if (changed.length > 0) {
        merchant.merge(values)
        merchant.useTransaction(trx)
        await merchant.save()
        await recordAudit(
          {
            actor,
            action: 'merchant.configure',
            subjectType: 'merchant',
            subjectId: merchant.merchantId,
            details: diff,
          },
          trx
        )
      }
      return { merchant, changed }
    })
    .then(async ({ merchant, changed }) => ({
      merchant,
      changed,
      warnings: await merchantWarnings(merchant),
    }))
}

/** Settings that make the merchant's payment calls fail, said plainly. */
async function merchantWarnings(merchant: Merchant) {
  const warnings: string[] = []
  if (merchant.status === 'suspended') {
    warnings.push('the merchant is suspended: every API call fails authentication')
  }
  if (!merchant.paymentEnabled) warnings.push('payments are off: payment create answers 403')
  if (!merchant.depositGroup) {
    warnings.push('no deposit group: payment create answers 404 (partner configuration missing)')
  } else if ((await activeAccountCount(merchant.depositGroup)) === 0) {
    warnings.push(
      `deposit group "${merchant.depositGroup}" has no active deposit account: payment create answers 503 until one is added (deposit-account:create)`
    )
  }
  return warnings
}

async function activeAccountCount(group: string) {
  const row = await DepositAccount.query()
    .where('deposit_group', group)
    .where('active', true)
    .count('* as total')
    .first()
  return Number(row?.$extras.total ?? 0)
}

/** The merchant's settings as printed by merchant:configure (amounts in THB). */
export async function merchantSettings(merchant: Merchant) {
  const platform = await Platform.find(merchant.platformId)
  const onOffText = (value: boolean) => (value ? 'on' : 'off')
  return {
    merchant_id: merchant.merchantId,
    name: merchant.name,
    platform: platform?.code ?? null,
    status: merchant.status,
    payments: onOffText(merchant.paymentEnabled),
    withdrawals: onOffText(merchant.withdrawEnabled),
    settlements: onOffText(merchant.settlementEnabled),
    deposit_group: merchant.depositGroup,
    deposit_accounts_active: merchant.depositGroup
      ? await activeAccountCount(merchant.depositGroup)
      : 0,
    payout_route: merchant.payoutRoute,
    order_ttl_seconds: merchant.orderTtlSeconds,
    slip_upload_wait_seconds: merchant.slipUploadWaitSeconds,
    payment_fee_rate_bps: merchant.paymentFeeRateBps,
    withdraw_fee_rate_bps: merchant.withdrawFeeRateBps,
    withdraw_fee: formatAmount(merchant.withdrawFeeFlat),
    settlement_fee: formatAmount(merchant.settlementFeeFlat),
    withdraw_min: formatAmount(merchant.withdrawMin),
    withdraw_max: merchant.withdrawMax === null ? null : formatAmount(merchant.withdrawMax),
    settlement_min: formatAmount(merchant.settlementMin),
    settlement_max: formatAmount(merchant.settlementMax),
    withdraw_duplicate_check: onOffText(merchant.withdrawDuplicateCheck),
    negative_balance_flag: merchant.negativeBalanceFlag,
  }
}

/**
 * Applies `changes` to the platform `code`: payment page domain, the deposit
 * killswitch and the deposit and settlement open hours (Bangkok time).
 */
export async function configurePlatform(
  code: string,
  changes: PlatformSettingsChanges,
  actor: string
) {
  const { errors, run } = collector()
  const values: Partial<Platform> = {}

  if (changes.name !== undefined) {
    const name = String(changes.name).trim()
    if (name.length >= 1 && name.length <= 120) values.name = name
    else errors.push('--name must be 1 to 120 characters')
  }
  if (changes.paymentPageDomain !== undefined) {
    const domain = run(() => domainOrNull(changes.paymentPageDomain!))
    if (domain !== undefined) values.paymentPageDomain = domain
  }
  if (changes.deposits !== undefined) {
    const enabled = run(() => onOff('--deposits', changes.deposits!))
    if (enabled !== undefined) values.depositEnabled = enabled
  }
  if (changes.depositHours !== undefined) {
    const hours = run(() => openHours('--deposit-hours', changes.depositHours!))
    if (hours) [values.depositOpenFrom, values.depositOpenTo] = hours
  }
  if (changes.settlementHours !== undefined) {
    const hours = run(() => openHours('--settlement-hours', changes.settlementHours!))
    if (hours) [values.settlementOpenFrom, values.settlementOpenTo] = hours
  }
  if (errors.length > 0) throw new OperatorInputError(errors.join('\n'))

  return db.transaction(async (trx) => {
    const platform = await Platform.query({ client: trx }).where('code', code).forUpdate().first()
    if (!platform) throw new OperatorInputError(`Platform "${code}" does not exist`)
    const diff: Record<string, { from: unknown; to: unknown }> = {}
    for (const [key, value] of Object.entries(values)) {
      const before = platform.$attributes[key]
      if (before !== value) diff[snake(key)] = { from: before ?? null, to: value ?? null }
    }
    const changed = Object.keys(diff)
    if (changed.length > 0) {
      platform.merge(values)
      platform.useTransaction(trx)
      await platform.save()
      await recordAudit(
        {
          actor,
          action: 'platform.configure',
          subjectType: 'platform',
          subjectId: platform.code,
          details: diff,
        },
        trx
      )
    }
    return { platform, changed }
  })
}

/** The platform's settings as printed by platform:configure. */
export function platformSettings(platform: Platform) {
  const hours = (from: string | null, to: string | null) =>
    from && to ? `${from}-${to}` : 'always'
  return {
    code: platform.code,
    name: platform.name,
    payment_page_domain: platform.paymentPageDomain,
    deposits: platform.depositEnabled ? 'on' : 'off',
    deposit_hours: hours(platform.depositOpenFrom, platform.depositOpenTo),
    settlement_hours: hours(platform.settlementOpenFrom, platform.settlementOpenTo),
  }
}

function nameOrNull(value: Clearable, valid: (value: string) => boolean, rule: string) {
  if (isCleared(value)) return null
  const text = String(value).trim()
  if (!valid(text)) throw new OperatorInputError(rule)
  return text
}

function domainOrNull(value: Clearable) {
  if (isCleared(value)) return null
  const domain = String(value).trim().toLowerCase()
  if (!isHostName(domain)) {
    throw new OperatorInputError(
      '--payment-page-domain must be a host name (optionally with :port) such as pay.example.com'
    )
  }
  return domain
}

const ON = new Set(['on', 'true', 'yes', '1', 'enabled'])
const OFF = new Set(['off', 'false', 'no', '0', 'disabled'])

function onOff(flag: string, value: string | boolean): boolean {
  if (typeof value === 'boolean') return value
  const text = String(value).trim().toLowerCase()
  if (ON.has(text)) return true
  if (OFF.has(text)) return false
  throw new OperatorInputError(`${flag} must be on or off, not "${value}"`)
}

/** "HH:mm-HH:mm" (Bangkok time; from > to spans midnight) or "always" → [from, to]. */
function openHours(flag: string, value: string): [string | null, string | null] {
  const text = String(value).trim().toLowerCase()
  if (text === 'always') return [null, null]
  const match = HOURS.exec(text)
  if (!match || !isValidTimeOfDay(match[1]) || !isValidTimeOfDay(match[2])) {
    throw new OperatorInputError(
      `${flag} must be HH:mm-HH:mm in Bangkok time (e.g. 09:00-22:00, or 22:00-06:00 across midnight) or "always", not "${value}"`
    )
  }
  if (match[1] === match[2]) {
    throw new OperatorInputError(`${flag}: from and to are equal; use "always" for no closing time`)
  }
  return [match[1], match[2]]
}
