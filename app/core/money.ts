/**
 * Money inside the gateway is an integer number of satang (1 THB = 100
 * satang), kept in a JS safe integer. It is parsed from the API's decimal
 * notation exactly (never through float arithmetic) and rendered back as a
 * JSON number with exactly two decimals.
 */

const AMOUNT_PATTERN = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/

/** Accepts a number or a string with at most two decimals; null otherwise. */
export function parseAmount(input: unknown): number | null {
  let text: string
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) return null
    // String(20.1) is "20.1": the shortest round-trip form, never "20.100000001".
    text = String(input)
  } else if (typeof input === 'string') {
    text = input.trim()
  } else {
    return null
  }
  const match = AMOUNT_PATTERN.exec(text)
  if (!match) return null
  const baht = Number(match[1])
  const satang = Number((match[2] ?? '').padEnd(2, '0'))
  return baht * 100 + satang
}

/** "1234.50" for 123450; negative values keep their sign. */
export function formatAmount(satang: number): string {
  const sign = satang < 0 ? '-' : ''
  const abs = Math.abs(satang)
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/**
 * "10,000.00" for 1000000: the amount as Thai readers write it (th-TH groups
 * thousands with commas, two decimals), for every page an operator or a
 * customer reads. Integer arithmetic, so no float ever touches satang; the
 * API, CSV exports and the CLI keep formatAmount's plain "10000.00".
 */
export function formatThb(satang: number): string {
  const sign = satang < 0 ? '-' : ''
  const abs = Math.abs(satang)
  const baht = String(Math.trunc(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${sign}${baht}.${String(abs % 100).padStart(2, '0')}`
}

/**
 * A value that JSON.stringify writes as a number with two decimals
 * (`100.00`, not `100`), as the merchant API contract asks.
 */
export function amountJson(satang: number): number {
  return (JSON as any).rawJSON(formatAmount(satang))
}

/** Coerces a database value to satang, refusing anything that is not a safe integer. */
export function assertSatang(value: unknown): number {
  const number = typeof value === 'bigint' ? Number(value) : Number(value)
  if (!Number.isSafeInteger(number)) {
    throw new Error(`Not a safe satang integer: ${String(value)}`)
  }
  return number
}

/**
 * A fee at `bps` basis points (1 bp = 0.01 %) of `satang`, rounded half up to
 * the satang. BigInt: amount × rate can pass 2^53 for large amounts.
 */
export function rateFee(satang: number, bps: number): number {
  return Number((BigInt(satang) * BigInt(bps) + 5000n) / 10000n)
}
