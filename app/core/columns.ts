import { assertSatang } from '#core/money'

/**
 * BIGINT satang columns arrive from mysql2 as numbers (or strings past 2^53,
 * which assertSatang refuses): money never silently loses precision.
 */
export const satangColumn = {
  consume: (value: unknown) => assertSatang(value),
}
