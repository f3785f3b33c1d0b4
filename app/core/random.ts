import { randomFillSync, randomInt } from 'node:crypto'
import { v7 } from 'uuid'

export const UPPER_ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
export const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
export const DIGITS = '0123456789'

/** Uniformly random string from a CSPRNG (randomInt has no modulo bias). */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  let out = ''
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)]
  return out
}

/**
 * The CSPRNG bytes of order uuids, drawn 4 KiB at a time: uuid's own v7
 * calls the CSPRNG for each one, a fiftieth of a payment create's CPU.
 */
const uuidBytes = new Uint8Array(4096)
let uuidAt = uuidBytes.length
const uuidClock = { msecs: -Infinity, seq: 0 }

/**
 * A UUIDv7 (RFC 9562) as uuid's v7() makes it: the time in milliseconds, a
 * counter that starts at random bits each millisecond and goes up within
 * it (method 1), then random bits.
 */
export function newUuidV7() {
  if (uuidAt === uuidBytes.length) {
    randomFillSync(uuidBytes)
    uuidAt = 0
  }
  const random = uuidBytes.subarray(uuidAt, (uuidAt += 16))
  const now = Date.now()
  if (now > uuidClock.msecs) {
    uuidClock.msecs = now
    uuidClock.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9]
  } else {
    uuidClock.seq = (uuidClock.seq + 1) | 0
    // The counter ran over: the next millisecond, as uuid's v7() does.
    if (uuidClock.seq === 0) uuidClock.msecs++
  }
  return v7({ random, msecs: uuidClock.msecs, seq: uuidClock.seq })
}
