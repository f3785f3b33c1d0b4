/**
 * THB amounts without floating-point arithmetic.
 *
 * The API writes amounts as decimal numbers with 2 decimals (`100.00`) and
 * accepts a number or a string with at most 2 decimals. Binary floats cannot
 * hold most decimal fractions (0.1 + 0.2 !== 0.3), so never add, subtract or
 * multiply amounts as numbers: convert them to integer satang (1 THB = 100
 * satang) with toSatang(), do the arithmetic on integers, and write the
 * result back with formatAmount(). Parsing goes through the decimal text of
 * the value (String(100.1) is "100.1"), never through multiplication.
 */

const AMOUNT_TEXT = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/

/**
 * Integer satang of a THB amount: `"100.00"`, `"100.5"`, `100`, `100.5` →
 * 10000, 10050, 10000, 10050. Throws a RangeError for a negative value, more
 * than 2 decimals (a float such as 0.1 + 0.2 included), or more than 13 digits
 * before the point; a TypeError for anything but a number or a string.
 */
export function toSatang(amount: number | string): number {
  let text: string
  if (typeof amount === 'number') {
    if (!Number.isFinite(amount)) throw new RangeError(`amount is not a finite number: ${amount}`)
    // The shortest text that reads back as this number: 20.1 → "20.1", 0.1 + 0.2 → "0.30000000000000004".
    text = String(amount)
  } else if (typeof amount === 'string') {
    text = amount.trim()
  } else {
    throw new TypeError(`amount must be a number or a string, not ${typeof amount}`)
  }
  const match = AMOUNT_TEXT.exec(text)
  if (!match) {
    throw new RangeError(
      `amount must be a non-negative THB amount with at most 2 decimals, e.g. "100.00": ${JSON.stringify(amount)}`
    )
  }
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
}

/** `"1234.50"` for 123450 satang (a negative value keeps its sign). */
export function formatAmount(satang: number): string {
  if (!Number.isSafeInteger(satang)) {
    throw new RangeError(`satang must be a safe integer: ${satang}`)
  }
  const sign = satang < 0 ? '-' : ''
  const abs = Math.abs(satang)
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** The 2-decimal text the client sends for an amount: 100 → "100.00", "20.5" → "20.50". */
export function amountText(amount: number | string): string {
  return formatAmount(toSatang(amount))
}

/** Whether two amounts are the same number of satang (e.g. a callback's amount and the stored order's). */
export function sameAmount(a: number | string, b: number | string): boolean {
  return toSatang(a) === toSatang(b)
}
