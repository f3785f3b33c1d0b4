import { parseAmount } from '#services/money'

/**
 * Parsing of values operators type into Ace commands (and, later, admin
 * forms): one set of rules and messages for every setting.
 */
export class OperatorInputError extends Error {}

/** A setting that can be cleared: --no-<option> (false), null, "none" or "unlimited". */
export type Clearable = string | number | false | null

export function isCleared(value: Clearable) {
  return (
    value === false ||
    value === null ||
    (typeof value === 'string' && ['none', 'unlimited'].includes(value.trim().toLowerCase()))
  )
}

export function integerOf(flag: string, value: string | number, min: number, max: number): number {
  const text = String(value).trim()
  const number = /^-?\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new OperatorInputError(`${flag} must be a whole number from ${min} to ${max}`)
  }
  return number
}

/** A THB amount with at most 2 decimals, in satang; zero only when allowed. */
export function amountOf(
  flag: string,
  value: string | number,
  options: { allowZero?: boolean } = {}
) {
  const satang = parseAmount(value)
  if (satang === null || (!options.allowZero && satang === 0)) {
    throw new OperatorInputError(
      `${flag} must be a${options.allowZero ? '' : ' positive'} THB amount with at most 2 decimals (e.g. 20.00), not "${value}"`
    )
  }
  return satang
}

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

/** A lower-case host name, optionally with :port (the payment page domain). */
export function isHostName(value: string) {
  return HOST_NAME.test(value)
}

/** Column name of a model property, as printed and audited: maxAmount → max_amount. */
export function snake(key: string) {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
}
