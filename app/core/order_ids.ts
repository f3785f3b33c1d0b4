import { DateTime } from 'luxon'
import { gatewayDateStamp } from '#core/clock'
import { randomString, UPPER_ALPHANUMERIC } from '#core/random'

/** Character at index 3 of a platform_order_id (spec: Order identifier). */
export type OrderMarker = 'P' | 'W' | 'M'

const ORDER_ID = /^[A-Z0-9]{3}[PWM]\d{8}[A-Z0-9]{12}$/

/**
 * 24 characters: the merchant's 3-character prefix, the mode marker, the
 * GMT+7 date as YYYYMMDD and 12 CSPRNG uppercase alphanumerics (36^12 ≈ 4.7e18
 * per prefix and day, so a collision is left to the unique key to catch).
 */
export function newPlatformOrderId(
  prefix: string,
  marker: OrderMarker,
  at: DateTime = DateTime.utc()
) {
  return `${prefix}${marker}${gatewayDateStamp(at)}${randomString(12, UPPER_ALPHANUMERIC)}`
}

/** Well-formed id with the given marker; says nothing about existence. */
export function isPlatformOrderId(value: unknown, marker: OrderMarker): value is string {
  return typeof value === 'string' && ORDER_ID.test(value) && value[3] === marker
}
