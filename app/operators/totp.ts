import { createHash, randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import encryption from '@adonisjs/core/services/encryption'

/**
 * The second factor (RFC 6238 TOTP, 6 digits, 30-second steps, SHA-1: what
 * every authenticator app reads), with otpauth, a maintained implementation.
 * The secret is stored encrypted with APP_KEY.
 */
const PERIOD = 30
/** A code from the previous or the next step is accepted (clock drift). */
const WINDOW = 1

export function newTotpSecret() {
  return new Secret({ size: 20 }).base32
}

export function encryptTotpSecret(base32: string) {
  return encryption.encrypt(base32)
}

export function decryptTotpSecret(encrypted: string) {
  const secret = encryption.decrypt<string>(encrypted)
  if (typeof secret !== 'string') throw new Error('TOTP secret cannot be decrypted with APP_KEY')
  return secret
}

function totp(base32: string, label: string) {
  return new TOTP({
    issuer: 'THB Gateway',
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(base32),
  })
}

/** The otpauth:// URI an authenticator app scans (as a QR code) at enrolment. */
export function totpUri(base32: string, email: string) {
  return totp(base32, email).toString()
}

/**
 * The time step a code belongs to, or null when it is not valid now. The
 * caller refuses a step not later than the last one used: a code works once.
 */
export function verifyTotp(base32: string, code: string, now = Date.now()): number | null {
  const digits = code.replace(/\s/g, '')
  if (!/^\d{6}$/.test(digits)) return null
  const delta = totp(base32, '').validate({ token: digits, timestamp: now, window: WINDOW })
  if (delta === null) return null
  return Math.floor(now / 1000 / PERIOD) + delta
}

/** For tests and the enrolment check: the code of a step. */
export function totpCode(base32: string, now = Date.now()) {
  return totp(base32, '').generate({ timestamp: now })
}

const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'

/**
 * Ten recovery codes of 12 characters (60 bits each), shown once; only their
 * SHA-256 is kept. A fast hash is enough for values this random (like API
 * tokens); each code works once.
 */
export function newRecoveryCodes() {
  return Array.from({ length: 10 }, () => {
    const bytes = randomBytes(12)
    const chars = [...bytes].map((byte) => RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length])
    return `${chars.slice(0, 4).join('')}-${chars.slice(4, 8).join('')}-${chars.slice(8).join('')}`
  })
}

export function hashRecoveryCode(code: string) {
  const normalised = code.replace(/[\s-]/g, '').toUpperCase()
  return createHash('sha256').update(normalised).digest('hex')
}
