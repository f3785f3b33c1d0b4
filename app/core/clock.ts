import { DateTime } from 'luxon'

export const GATEWAY_ZONE = 'Asia/Bangkok'

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
