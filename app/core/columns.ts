import { DateTime } from 'luxon'
import { column } from '@adonisjs/lucid/orm'
import { errors } from '@adonisjs/lucid'
import type { LucidRow } from '@adonisjs/lucid/types/model'
import { assertSatang } from '#core/money'
import { formatUtcSqlDateTime } from '#core/clock'

/**
 * BIGINT satang columns arrive from mysql2 as numbers (or strings past 2^53,
 * which assertSatang refuses): money never silently loses precision.
 */
export const satangColumn = {
  consume: (value: unknown) => assertSatang(value),
}

/**
 * Every DATETIME column of the models: `@dateTimeColumn()` in place of
 * Lucid's `@column.dateTime()`, with the same options. It writes the value
 * as UTC whatever the zone its DateTime carries: the connection reads
 * DATETIMEs as UTC (config/database.ts), and Lucid's own formatter writes the
 * DateTime's wall time, so a host with TZ set to Bangkok would store
 * autoCreate timestamps 7 hours off. It also builds no query builder per
 * value (Lucid's asks one for the dialect's format, 18 KiB per order
 * written, docs/performance.md).
 */
export function dateTimeColumn(options?: Parameters<typeof column.dateTime>[0]) {
  return column.dateTime({ ...options, prepare: prepareUtcDateTime })
}

function prepareUtcDateTime(value: unknown, attribute: string, row: LucidRow) {
  if (typeof value === 'string' || !value) return value
  if (DateTime.isDateTime(value) && value.isValid) return formatUtcSqlDateTime(value)
  // Lucid's own error for what its prepare refuses.
  throw new errors.E_INVALID_DATE_COLUMN_VALUE([
    `${row.constructor.name}.${attribute}`,
    DateTime.isDateTime(value) ? value.invalidReason : 'It must be an instance of "luxon.DateTime"',
  ])
}
