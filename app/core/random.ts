import { randomInt } from 'node:crypto'

export const UPPER_ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
export const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
export const DIGITS = '0123456789'

/** Uniformly random string from a CSPRNG (randomInt has no modulo bias). */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  let out = ''
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)]
  return out
}
