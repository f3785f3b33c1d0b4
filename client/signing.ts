import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * X-SIGNATURE of a request body: lowercase hex HMAC-SHA256 of the exact
 * bytes, keyed with the merchant's secret. Sign the bytes you send, and send
 * the bytes you signed: re-serialising (whitespace, key order, unicode
 * escaping) breaks the signature.
 */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

const SIGNATURE = /^[0-9a-f]{64}$/

/**
 * Whether a callback's X-Signature header is the HMAC-SHA256 of its raw body
 * with the merchant's secret. Give it the bytes as received, before any JSON
 * parsing. The comparison is in constant time (crypto.timingSafeEqual on the
 * two 32-byte digests); a missing, repeated or malformed header (not 64
 * lowercase hex characters) is false.
 */
export function verifyCallback(
  rawBody: Buffer,
  signatureHeader: string | string[] | undefined,
  secret: string
): boolean {
  if (typeof signatureHeader !== 'string' || !SIGNATURE.test(signatureHeader)) return false
  const expected = createHmac('sha256', secret).update(rawBody).digest()
  const given = Buffer.from(signatureHeader, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
