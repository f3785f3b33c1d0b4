import encryption from '@adonisjs/core/services/encryption'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import ssh2 from 'ssh2'

/** Where a deposit account's statements are fetched from (migration 220). */
export type SourceKind = 'sftp' | 'imap'

export interface StatementSource {
  id: number
  deposit_account_id: number
  kind: SourceKind
  name: string
  host: string
  port: number
  username: string
  secret_encrypted: string
  host_key_fingerprint: string | null
  imap_tls: 'implicit' | 'starttls' | null
  tls_ca: string | null
  remote_dir: string | null
  file_pattern: string | null
  remove_after_import: boolean
  mailbox: string | null
  sender: string | null
  layout: string | null
  every_minutes: number
  statement_due_by: string | null
  enabled: boolean
  last_fetched_at: Date | null
  last_success_at: Date | null
  last_error: string | null
  consecutive_failures: number
  failures_total: number
  missing_notified_day: string | null
  imap_uid_validity: string | null
  imap_last_uid: string | null
  fetch_lease_until: Date | null
  created_at: Date
  updated_at: Date
}

/** A row as the driver returns it, with booleans and numbers as such. */
export function sourceOf(row: Record<string, any>): StatementSource {
  return {
    ...(row as StatementSource),
    id: Number(row.id),
    deposit_account_id: Number(row.deposit_account_id),
    port: Number(row.port),
    every_minutes: Number(row.every_minutes),
    remove_after_import: Boolean(row.remove_after_import),
    enabled: Boolean(row.enabled),
    consecutive_failures: Number(row.consecutive_failures),
    failures_total: Number(row.failures_total),
    imap_uid_validity: row.imap_uid_validity === null ? null : String(row.imap_uid_validity),
    imap_last_uid: row.imap_last_uid === null ? null : String(row.imap_last_uid),
  }
}

export async function findSource(id: number, client: QueryClientContract = db.connection()) {
  const row = await client.from('statement_sources').where('id', id).first()
  return row ? sourceOf(row) : null
}

/** The source's row, locked for the caller's transaction. */
export async function lockSource(client: QueryClientContract, id: number) {
  const row = await client.from('statement_sources').where('id', id).forUpdate().first()
  return row ? sourceOf(row) : null
}

/** The SSH private key or IMAP password, encrypted with APP_KEY (as merchant secrets are). */
export function encryptSourceSecret(secret: string) {
  return encryption.encrypt(secret)
}

/** The plain secret, only to connect; never logged, shown or audited. */
export function decryptSourceSecret(encrypted: string) {
  const secret = encryption.decrypt<string>(encrypted)
  if (typeof secret !== 'string') {
    throw new Error('the source secret cannot be decrypted with the current APP_KEY')
  }
  return secret
}

/**
 * An SSH private key as an operator pastes it: parsed, private, without a
 * passphrase (the key is encrypted at rest instead). Returns the parsed key
 * or the reason it is refused.
 */
export function parsePrivateKey(text: string) {
  let parsed: ReturnType<typeof ssh2.utils.parseKey>
  try {
    parsed = ssh2.utils.parseKey(text)
  } catch (error) {
    return { error: `not an SSH private key (${(error as Error).message})` }
  }
  if (parsed instanceof Error) {
    return {
      error: /encrypted|passphrase/i.test(parsed.message)
        ? 'the private key has a passphrase: give it without one (it is stored encrypted)'
        : `not an SSH private key (${parsed.message})`,
    }
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed
  if (!key || !key.isPrivateKey()) return { error: 'this is a public key: give the private key' }
  return { key }
}

/**
 * The public half of a source's SSH key, as an authorized_keys line, for
 * the bank: derived from the stored private key (which is never shown).
 */
export function publicKeyOf(source: Pick<StatementSource, 'kind' | 'secret_encrypted' | 'name'>) {
  if (source.kind !== 'sftp') return null
  try {
    const parsed = parsePrivateKey(decryptSourceSecret(source.secret_encrypted))
    if (!parsed.key) return null
    return `${parsed.key.type} ${parsed.key.getPublicSSH().toString('base64')} thb-gateway-${source.name}`
  } catch {
    return null
  }
}
