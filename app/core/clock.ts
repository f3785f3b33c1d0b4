import { DateTime } from 'luxon'

/**
 * The gateway's time zone: Bangkok, GMT+7. Thailand keeps UTC+7 all year (no
 * daylight saving since 1920), so it is given as a fixed offset: the same
 * times as 'Asia/Bangkok', without the Intl time zone lookup that zone names
 * cost on every conversion (5 % of payment create's CPU, mostly the limit
 * periods and the *_datetime fields).
 */
export const GATEWAY_ZONE = 'UTC+7'

/** Renders a *_datetime field: `YYYY-MM-DD HH:mm:ss` in GMT+7. */
export function formatGatewayDateTime(value: DateTime | Date | null): string | null {
  if (value === null) return null
  const dateTime = value instanceof Date ? DateTime.fromJSDate(value) : value
  return dateTime.setZone(GATEWAY_ZONE).toFormat('yyyy-LL-dd HH:mm:ss')
}

/** Current Unix time in whole seconds. */
export function epochSeconds(): number {
  return Math.floor(Date.now() / 1000)
}
