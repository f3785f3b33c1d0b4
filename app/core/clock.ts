import type { DateTime } from 'luxon'

/**
 * The gateway's time zone: Bangkok, GMT+7. Thailand keeps UTC+7 all year (no
 * daylight saving since 1920), so it is given as a fixed offset: the same
 * times as 'Asia/Bangkok', without the Intl time zone lookup that zone names
 * cost on every conversion (5 % of payment create's CPU, mostly the limit
 * periods and the *_datetime fields).
 */
export const GATEWAY_ZONE = 'UTC+7'

/**
 * The same offset in milliseconds, for the strings and period starts that
 * every payment create and answer computes: with a fixed whole-hour offset
 * they are arithmetic on the instant, not Luxon's zone conversion and
 * toFormat (which parses its format string on every call; a fifth of what a
 * create allocated, docs/performance.md).
 */
const GATEWAY_OFFSET_MS = 7 * 3_600_000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

type Instant = DateTime | Date

function millis(value: Instant) {
  return value instanceof Date ? value.getTime() : value.toMillis()
}

/** `value` modulo `step`, never negative (instants before 1970 included). */
function modulo(value: number, step: number) {
  return ((value % step) + step) % step
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` of the instant `ms` shifted by `offsetMs`. */
function isoAt(ms: number, offsetMs: number) {
  return new Date(ms + offsetMs).toISOString()
}

/** `YYYY-MM-DD HH:mm:ss` of the instant `ms` shifted by `offsetMs`. */
function dateTimeAt(ms: number, offsetMs: number) {
  const iso = isoAt(ms, offsetMs)
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
}

/** Renders a *_datetime field: `YYYY-MM-DD HH:mm:ss` in GMT+7. */
export function formatGatewayDateTime(value: Instant | null): string | null {
  if (value === null) return null
  const ms = millis(value)
  return Number.isFinite(ms) ? dateTimeAt(ms, GATEWAY_OFFSET_MS) : null
}

/** The GMT+7 calendar date as `YYYYMMDD` (a platform_order_id's date). */
export function gatewayDateStamp(value: Instant): string {
  const iso = isoAt(millis(value), GATEWAY_OFFSET_MS)
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`
}

/**
 * A DATETIME column's value: `YYYY-MM-DD HH:mm:ss` in UTC, whatever the
 * zone the DateTime carries (the connection reads DATETIMEs as UTC); to the
 * second, as Lucid's own formatter writes model columns.
 */
export function formatUtcSqlDateTime(value: Instant): string {
  return dateTimeAt(millis(value), 0)
}

/**
 * The UTC instants at which the Bangkok hour and day of `at` begin (the
 * offset is whole hours, so a Bangkok hour begins when a UTC hour does).
 */
export function gatewayPeriodStarts(at: Instant) {
  const ms = millis(at)
  return {
    hourStart: new Date(ms - modulo(ms, HOUR_MS)),
    dayStart: new Date(ms - modulo(ms + GATEWAY_OFFSET_MS, DAY_MS)),
  }
}

/**
 * SQL for the GMT+7 calendar date (`YYYY-MM-DD`) of a UTC DATETIME column:
 * the bank day a statement line or a claim belongs to. `column` is a column
 * name written by the caller, never input.
 */
export function gatewayDaySql(column: string) {
  return `DATE_FORMAT(${column} + INTERVAL 7 HOUR, '%Y-%m-%d')`
}

/** `YYYY-MM-DD` of the instant in GMT+7 (the bank day). */
export function gatewayDay(value: Instant): string {
  return isoAt(millis(value), GATEWAY_OFFSET_MS).slice(0, 10)
}

/** Minutes since midnight in GMT+7 (0 to 1439). */
export function gatewayMinuteOfDay(at: Instant): number {
  return Math.floor(modulo(millis(at) + GATEWAY_OFFSET_MS, DAY_MS) / 60_000)
}

/** Current Unix time in whole seconds. */
export function epochSeconds(): number {
  return Math.floor(Date.now() / 1000)
}
