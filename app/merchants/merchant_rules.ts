import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Merchant from '#merchants/models/merchant'
import Platform from '#merchants/models/platform'
import DepositAccount from '#payments/models/deposit_account'
import { DEPOSIT_GROUP_PATTERN, DEPOSIT_GROUP_RULE } from '#payments/deposit_account_input'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import { formatAmount } from '#core/money'
import { ActionError } from '#core/validation'
import type { ApprovalTarget } from '#approvals/approvable_actions'

/** Letters and digits ending with a digit (generated ids are M + 9 digits). */
export const MERCHANT_ID = /^[A-Za-z0-9]{0,31}[0-9]$/
/** The first three characters of every platform_order_id of the merchant. */
export const ORDER_PREFIX = /^[A-Z0-9]{3}$/
export const ORDER_TTL_RANGE: [number, number] = [60, 86_400]
export const MAX_BPS = 10_000 // 100 %
/** The longest grace period of previous credentials after a rotation. */
export const MAX_GRACE_SECONDS = 30 * 24 * 60 * 60

/** Messages shared by the merchant actions, by "field.rule" or rule. */
export const MERCHANT_MESSAGES = {
  'range': '{{ field }} must be a whole number from {{ min }} to {{ max }}',
  'withoutDecimals': '{{ field }} must be a whole number',
  'merchant_id.regex': 'merchant_id: up to 32 letters or digits, ending with a digit',
  'order_prefix.regex': 'order_prefix: exactly 3 uppercase letters or digits',
  'status.enum': 'status must be active or suspended',
  'deposit_group.regex': `deposit_group: ${DEPOSIT_GROUP_RULE}`,
}

/**
 * The merchant with public id `merchantId`, its row locked for the
 * transaction (unless `forUpdate` is false); refused when there is none.
 */
export async function lockMerchant(
  trx: TransactionClientContract,
  merchantId: string,
  { forUpdate = true } = {}
) {
  const query = Merchant.query({ client: trx }).where('merchant_id', merchantId)
  const merchant = await (forUpdate ? query.forUpdate() : query).first()
  if (!merchant) {
    throw ActionError.notFound('merchant_id', `No merchant with merchant_id ${merchantId}`)
  }
  return merchant
}

/** A merchant as the target of an approval request (the merchant page lists its requests). */
export function merchantTarget(merchant: Merchant): ApprovalTarget {
  return { type: 'merchant', id: merchant.merchantId, amount: null, reviewedBy: null }
}

/** A whole number from min to max (numeric text is accepted, as typed in a form or flag). */
export function wholeNumber([min, max]: [number, number]) {
  return vine.number().withoutDecimals().range([min, max])
}

/** The group of deposit accounts the merchant's payments draw from (the pool's rule). */
export function depositGroup() {
  return vine.string().trim().regex(DEPOSIT_GROUP_PATTERN)
}

/** The name of a payout connector (merchants.payout_route). */
export const payoutRoute = vine.createRule((value, _options, field: FieldContext) => {
  const route = String(value).trim()
  if (!PAYOUT_CONNECTOR_NAMES.includes(route)) {
    return field.report(
      `${field.name} must be one of: ${PAYOUT_CONNECTOR_NAMES.join(', ')}`,
      'payout_route',
      field
    )
  }
  field.mutate(route, field)
})

/**
 * The merchant's settings as the audit log, the settings screens and
 * merchant:configure show them: the configure action's field names, values
 * as that action accepts them (amounts in THB), so a form can be filled from it.
 */
export function merchantSnapshot(merchant: Merchant) {
  return {
    merchant_id: merchant.merchantId,
    name: merchant.name,
    order_prefix: merchant.orderPrefix,
    status: merchant.status,
    deposit_group: merchant.depositGroup,
    payout_route: merchant.payoutRoute,
    payment_enabled: merchant.paymentEnabled,
    withdraw_enabled: merchant.withdrawEnabled,
    settlement_enabled: merchant.settlementEnabled,
    order_ttl_seconds: merchant.orderTtlSeconds,
    slip_upload_wait_seconds: merchant.slipUploadWaitSeconds,
    payment_fee_rate_bps: merchant.paymentFeeRateBps,
    withdraw_fee_rate_bps: merchant.withdrawFeeRateBps,
    withdraw_fee_flat: formatAmount(merchant.withdrawFeeFlat),
    settlement_fee_flat: formatAmount(merchant.settlementFeeFlat),
    withdraw_min: formatAmount(merchant.withdrawMin),
    withdraw_max: merchant.withdrawMax === null ? null : formatAmount(merchant.withdrawMax),
    settlement_min: formatAmount(merchant.settlementMin),
    settlement_max: formatAmount(merchant.settlementMax),
    withdraw_duplicate_check: merchant.withdrawDuplicateCheck,
    /** null: the gateway default (API_RATE_LIMIT_PER_MERCHANT). */
    api_rate_limit: merchant.apiRateLimit,
  }
}

/**
 * What the merchant page shows beside the settings: the platform, how many
 * active accounts the deposit group has, and the negative-balance flag.
 */
export async function merchantOverview(merchant: Merchant) {
  const platform = await Platform.find(merchant.platformId)
  return {
    ...merchantSnapshot(merchant),
    platform: platform?.code ?? null,
    deposit_accounts_active: merchant.depositGroup
      ? await activeAccountCount(merchant.depositGroup)
      : 0,
    negative_balance_flag: merchant.negativeBalanceFlag,
  }
}

/** Settings that make the merchant's calls fail, said plainly. */
export async function merchantWarnings(merchant: Merchant) {
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
