import { ImapFlow } from 'imapflow'
import { simpleParser } from 'mailparser'
import { checkServerIdentity, type PeerCertificate } from 'node:tls'
import {
  ChannelError,
  STATEMENT_ATTACHMENT,
  describeError,
  namePattern,
  normalizeCertificateFingerprint,
  sameFingerprint,
  type ChannelFile,
} from '#reconciliation/fetch/channel'
import type { StatementSource } from '#reconciliation/fetch/statement_sources'
import { vouchForSender } from '#reconciliation/fetch/mail_authentication'
import reconciliationConfig from '#config/reconciliation'

const TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 }
/** Messages read per fetch: the rest wait for the next one (the last UID read is kept). */
const MESSAGES_PER_FETCH = 50

/** One mail from the bank's sender address, with its statement attachments. */
export interface BankMail {
  uid: number
  messageId: string
  /** The From address as the mail says it (checked equal to the source's sender). */
  from: string
  /** The receiving server's verdict that vouches for the sender, or null (mail_authentication.ts). */
  vouchedBy: string | null
  /** Why nothing vouched for it, when nothing did. */
  notVouched: string | null
  files: ChannelFile[]
}

export interface ImapSession {
  /** The mailbox's UIDVALIDITY: UIDs kept from another one mean nothing. */
  uidValidity: string
  /** Mails FROM the source's sender with a UID above `afterUid`, oldest first, at most a batch. */
  mailsAfter(afterUid: number): AsyncGenerator<BankMail | { uid: number; skipped: string }>
  end(): Promise<void>
}

/**
 * The TLS options for a source: the server's certificate is always
 * verified, against the system's CAs or, when the source names one, its
 * own CA (a bank's private CA, a test server's self-signed certificate);
 * the host name is checked; and when the source pins a certificate
 * fingerprint, the certificate must also be that one. Verification is
 * never turned off.
 */
export function imapTlsOptions(source: Pick<StatementSource, 'tls_ca' | 'host_key_fingerprint'>) {
  const pinned = source.host_key_fingerprint
    ? normalizeCertificateFingerprint(source.host_key_fingerprint)
    : null
  return {
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
    ...(source.tls_ca ? { ca: source.tls_ca } : {}),
    checkServerIdentity: (host: string, certificate: PeerCertificate) => {
      const mismatch = checkServerIdentity(host, certificate)
      if (mismatch) return mismatch
      if (pinned && !sameFingerprint(certificate.fingerprint256 ?? '', pinned)) {
        return new Error(
          `certificate fingerprint mismatch: the server presented ${certificate.fingerprint256}, pinned ${pinned}`
        )
      }
      return undefined
    },
  }
}

/**
 * Opens the source's mailbox over TLS (implicit TLS, or STARTTLS required:
 * the password never crosses the wire in clear) and logs in with the
 * source's user and password. A mail's From address alone does not make it
 * the bank's: the receiving server must vouch for it (mail_authentication.ts).
 */
export async function openImap(
  source: Pick<
    StatementSource,
    | 'host'
    | 'port'
    | 'username'
    | 'imap_tls'
    | 'tls_ca'
    | 'host_key_fingerprint'
    | 'mailbox'
    | 'sender'
    | 'file_pattern'
  >,
  password: string
): Promise<ImapSession> {
  const sender = (source.sender ?? '').trim().toLowerCase()
  if (!sender) throw new ChannelError('no sender address: nothing would be read')
  const client = new ImapFlow({
    host: source.host,
    port: source.port,
    secure: source.imap_tls !== 'starttls',
    ...(source.imap_tls === 'starttls' ? { doSTARTTLS: true } : {}),
    auth: { user: source.username, pass: password },
    tls: imapTlsOptions(source),
    logger: false,
    disableAutoIdle: true,
    disableCompression: true,
    ...TIMEOUTS,
  })
  // A socket error after connect() would otherwise be an unhandled 'error' event.
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    client.close()
    const detail = (error as { responseText?: string }).responseText
    throw new ChannelError(
      `IMAP connection to ${source.host}:${source.port} as ${source.username} failed: ${describeError(error)}${detail ? ` (${detail})` : ''}`,
      { cause: error }
    )
  }
  const mailbox = source.mailbox || 'INBOX'
  let lock: Awaited<ReturnType<ImapFlow['getMailboxLock']>>
  try {
    lock = await client.getMailboxLock(mailbox, { readOnly: true })
  } catch (error) {
    await client.logout().catch(() => client.close())
    throw new ChannelError(`IMAP mailbox ${mailbox} cannot be opened: ${describeError(error)}`, {
      cause: error,
    })
  }
  const opened = client.mailbox
  const uidValidity = opened ? String(opened.uidValidity) : '0'
  const wanted = source.file_pattern ? namePattern(source.file_pattern) : null

  return {
    uidValidity,
    async *mailsAfter(afterUid) {
      let uids: number[]
      try {
        const found = await client.search({ from: sender, uid: `${afterUid + 1}:*` }, { uid: true })
        uids = (found || []).filter((uid) => uid > afterUid).sort((a, b) => a - b)
      } catch (error) {
        throw new ChannelError(`IMAP search in ${mailbox} failed: ${describeError(error)}`, {
          cause: error,
        })
      }
      for (const uid of uids.slice(0, MESSAGES_PER_FETCH)) {
        let raw: Buffer | undefined
        try {
          const message = await client.fetchOne(String(uid), { source: true }, { uid: true })
          raw = message ? message.source : undefined
        } catch (error) {
          throw new ChannelError(
            `IMAP reading message UID ${uid} failed: ${describeError(error)}`,
            {
              cause: error,
            }
          )
        }
        if (!raw) {
          yield { uid, skipped: 'gone from the mailbox' }
          continue
        }
        const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true })
        const fromAddresses = (mail.from?.value ?? []).map((entry) =>
          (entry.address ?? '').toLowerCase()
        )
        // SEARCH FROM matches a substring: the mail's From must be exactly the sender.
        if (fromAddresses.length !== 1 || fromAddresses[0] !== sender) {
          yield { uid, skipped: `from ${fromAddresses.join(', ') || 'nobody'}, not ${sender}` }
          continue
        }
        const messageId = mail.messageId ?? `<uid-${uidValidity}-${uid}@${source.host}>`
        // Topmost first, as the receiving server wrote them.
        const authenticationResults = mail.headerLines
          .filter((header) => header.key === 'authentication-results')
          .map((header) => header.line.slice(header.line.indexOf(':') + 1))
        const vouch = vouchForSender(
          authenticationResults,
          fromAddresses[0],
          reconciliationConfig.statementMailAuthservIds
        )
        const files = mail.attachments
          .filter((attachment) => {
            const name = attachment.filename ?? ''
            return STATEMENT_ATTACHMENT.test(name) && (!wanted || wanted(name))
          })
          .map((attachment) => ({
            remoteName: messageId,
            fileName: attachment.filename!.slice(0, 255),
            content: attachment.content,
            vouchedBy: vouch.vouchedBy,
          }))
        yield {
          uid,
          messageId,
          from: fromAddresses[0],
          vouchedBy: vouch.vouchedBy,
          notVouched: vouch.why,
          files,
        }
      }
    },
    async end() {
      lock.release()
      await client.logout().catch(() => client.close())
    },
  }
}
