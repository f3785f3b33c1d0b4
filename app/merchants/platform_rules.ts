import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import type Platform from '#merchants/models/platform'
import { isValidTimeOfDay } from '#merchants/open_period'
import { formatAmount } from '#core/money'

export const PLATFORM_CODE = /^[a-z0-9][a-z0-9_-]{1,31}$/

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

/** The payment page domain: a lower-case host name, optionally :port. */
export const paymentPageDomain = vine.createRule((value, _options, field: FieldContext) => {
  const domain = String(value).trim().toLowerCase()
  if (!HOST_NAME.test(domain)) {
    return field.report(
      'payment_page_domain must be a host name (optionally with :port) such as pay.example.com',
      'host_name',
      field
    )
  }
  field.mutate(domain, field)
})

/**
 * Open hours "HH:mm-HH:mm" in Bangkok time (a window such as 22:00-06:00
 * spans midnight) or "always"; becomes [from, to] ([null, null]: always open).
 */
export const openHours = vine.createRule((value, _options, field: FieldContext) => {
  const text = String(value).trim().toLowerCase()
  if (text === 'always') return field.mutate([null, null], field)
  const match = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/.exec(text)
  if (!match || !isValidTimeOfDay(match[1]) || !isValidTimeOfDay(match[2])) {
    return field.report(
      `${field.name} must be HH:mm-HH:mm in Bangkok time (e.g. 09:00-22:00, or 22:00-06:00 across midnight) or "always"`,
      'open_hours',
      field
    )
  }
  if (match[1] === match[2]) {
    return field.report(
      `${field.name}: from and to are equal; use "always" for no closing time`,
      'open_hours',
      field
    )
  }
  field.mutate([match[1], match[2]], field)
})

/** The platform as the audit log and the settings screens show it. */
export function platformSnapshot(platform: Platform) {
  const hours = (from: string | null, to: string | null) =>
    from && to ? `${from}-${to}` : 'always'
  return {
    code: platform.code,
    name: platform.name,
    payment_page_domain: platform.paymentPageDomain,
    deposit_enabled: platform.depositEnabled,
    deposit_hours: hours(platform.depositOpenFrom, platform.depositOpenTo),
    settlement_hours: hours(platform.settlementOpenFrom, platform.settlementOpenTo),
    /** THB as configure-platform accepts it; null: no second operator needed. */
    four_eyes_threshold:
      platform.fourEyesThreshold === null || platform.fourEyesThreshold === undefined
        ? null
        : formatAmount(platform.fourEyesThreshold),
  }
}
