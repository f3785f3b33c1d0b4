import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * What the bank channels (SFTP directory, IMAP mailbox) have in common: a
 * file they hand over, how its name is matched, and how a pinned key or
 * certificate is compared.
 */

/** A statement file as a channel delivered it. */
export interface ChannelFile {
  /** Where it came from, as the channel names it: the remote path, or the mail's Message-ID. */
  remoteName: string
  /** The file's own name (the remote file's base name, the attachment's file name). */
  fileName: string
  content: Buffer
  /**
   * What vouches that the bank wrote it: the SFTP server's pinned host key
   * with our key's login, or the receiving mail server's DKIM verdict
   * (mail_authentication.ts). Null: a file a person could have written,
   * held for a second operator above the four-eyes threshold.
   */
  vouchedBy: string | null
}

/** A channel that could not be reached or read: the message is safe to show (no secret in it). */
export class ChannelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ChannelError'
  }
}

/**
 * A host key's fingerprint as OpenSSH prints it (`ssh-keygen -lf`,
 * `ssh-keyscan … | ssh-keygen -lf -`): `SHA256:` and the unpadded base64 of
 * the SHA-256 of the key's wire form.
 */
export function sshFingerprint(hostKey: Buffer) {
  return `SHA256:${createHash('sha256').update(hostKey).digest('base64').replace(/=+$/, '')}`
}

/** The form `SHA256:<43 base64 characters>` (a trailing `=` is dropped). */
export const SSH_FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/

export function normalizeSshFingerprint(value: string) {
  return value.trim().replace(/=+$/, '')
}

/**
 * A certificate's SHA-256 fingerprint as `openssl x509 -fingerprint -sha256`
 * and Node print it: 32 hex bytes separated by colons, upper case. Accepts
 * them without colons or in lower case; null when it is not one.
 */
export function normalizeCertificateFingerprint(value: string) {
  const hex = value
    .trim()
    .replace(/^sha256\s*fingerprint\s*=\s*/i, '')
    .replace(/:/g, '')
    .toUpperCase()
  if (!/^[0-9A-F]{64}$/.test(hex)) return null
  return hex.match(/../g)!.join(':')
}

/**
 * Whether two fingerprints are the same, in time that does not depend on
 * where they differ (both hashed first, so their lengths do not matter).
 */
export function sameFingerprint(actual: string, pinned: string) {
  const a = createHash('sha256').update(actual).digest()
  const b = createHash('sha256').update(pinned).digest()
  return timingSafeEqual(a, b)
}

/**
 * A file name pattern: shell-style `*` and `?`, several separated by commas
 * (`*.csv, STMT_????.txt`), case-insensitive, matched against the base name.
 */
export function namePattern(pattern: string) {
  const parts = pattern
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(
      (part) =>
        '^' +
        part
          .split('')
          .map((char) =>
            char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')
          )
          .join('') +
        '$'
    )
  const expressions = parts.map((part) => new RegExp(part, 'i'))
  return (name: string) => expressions.some((expression) => expression.test(name))
}

/** The statement files a mail may carry (by the attachment's file name). */
export const STATEMENT_ATTACHMENT = /\.(csv|txt|xlsx)$/i

/** An error's message for the source's `last_error`: one line, bounded. */
export function describeError(error: unknown) {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown })?.code
  const text = code && !message.includes(String(code)) ? `${message} (${code})` : message
  return text.replace(/\s+/g, ' ').trim().slice(0, 1000) || 'unknown error'
}
