import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import type Merchant from '#merchants/models/merchant'
import {
  MAX_BPS,
  MERCHANT_MESSAGES,
  ORDER_TTL_RANGE,
  depositGroup,
  lockMerchant,
  merchantSnapshot,
  merchantWarnings,
  payoutRoute,
  wholeNumber,
} from '#merchants/merchant_rules'
import { changedValues, recordAudit } from '#core/audit'
import { formatAmount } from '#core/money'
import {
  ActionError,
  clearable,
  onOff,
  thbAmount,
  validateInput,
  type FieldError,
} from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

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
 * Changes a merchant's settings: status (suspend/activate), deposit group,
 * payout route, permissions, order TTL, fees, limits, rate limit. Only the
 * fields given change. Returns the merchant, the names of the settings that
 * changed (none: nothing written or audited) and warnings about settings that
 * make the merchant's calls fail.
 */
export async function configureMerchant(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(configureMerchantValidator, input, MERCHANT_MESSAGES)
  const result = await withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const merchant = await lockMerchant(trx, data.merchant_id)
      const before = merchantSnapshot(merchant)
      for (const [field, property] of Object.entries(COLUMNS)) {
        const value = data[field as keyof typeof COLUMNS]
        if (value !== undefined) merchant.merge({ [property]: value })
      }
      const errors = limitErrors(merchant, data)
      if (errors.length > 0) throw new ActionError(errors)

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
      return { merchant, changed: diff.changed }
    })
  )
  return { ...result, warnings: await merchantWarnings(result.merchant) }
}

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
