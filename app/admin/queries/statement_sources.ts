import db from '@adonisjs/lucid/services/db'
import { formatGatewayDateTime } from '#core/clock'
import { missingStatements } from '#reconciliation/fetch/missing_statements'
import {
  publicKeyOf,
  sourceOf,
  type StatementSource,
} from '#reconciliation/fetch/statement_sources'

const asDate = (value: unknown) =>
  value === null || value === undefined
    ? null
    : value instanceof Date
      ? value
      : new Date(String(value))
const shown = (value: unknown) => formatGatewayDateTime(asDate(value))

/** A source's state in one word, and its badge's tone. */
function stateOf(source: StatementSource, missing: boolean) {
  if (!source.enabled) return { state: 'off', tone: 'off' }
  if (source.consecutive_failures > 0) {
    return { state: `failing (${source.consecutive_failures})`, tone: 'bad' }
  }
  if (missing) return { state: "today's statement missing", tone: 'warn' }
  if (!source.last_fetched_at) return { state: 'not fetched yet', tone: 'warn' }
  return { state: 'ok', tone: 'on' }
}

/** A source as the back-office shows it: everything but the secret. */
export function presentSource(
  source: StatementSource & { bank?: string; account_no?: string },
  missing: boolean
) {
  return {
    id: source.id,
    deposit_account_id: source.deposit_account_id,
    account: source.bank ? `${source.bank} ${source.account_no}` : '',
    kind: source.kind,
    name: source.name,
    host: source.host,
    port: source.port,
    username: source.username,
    endpoint: `${source.kind}://${source.username}@${source.host}:${source.port}`,
    where:
      source.kind === 'sftp'
        ? `${source.remote_dir}/${source.file_pattern ?? '*.csv'}`
        : `${source.mailbox ?? 'INBOX'} from ${source.sender}`,
    host_key_fingerprint: source.host_key_fingerprint,
    imap_tls: source.imap_tls,
    tls_ca: Boolean(source.tls_ca),
    remote_dir: source.remote_dir,
    file_pattern: source.file_pattern,
    remove_after_import: source.remove_after_import,
    mailbox: source.mailbox,
    sender: source.sender,
    layout: source.layout,
    every_minutes: source.every_minutes,
    statement_due_by: source.statement_due_by,
    enabled: source.enabled,
    last_fetched_at: shown(source.last_fetched_at),
    last_success_at: shown(source.last_success_at),
    last_error: source.last_error,
    consecutive_failures: source.consecutive_failures,
    ...stateOf(source, missing),
  }
}

/** Every source, by deposit account, with its state now. */
export async function listSources() {
  const rows = await db
    .from('statement_sources as s')
    .join('deposit_accounts as a', 'a.id', 's.deposit_account_id')
    .orderBy('s.deposit_account_id')
    .orderBy('s.id')
    .select('s.*', 'a.bank', 'a.account_no')
  const missing = new Set((await missingStatements()).sources.map((source) => source.id))
  return rows.map((row) =>
    presentSource(
      { ...sourceOf(row), bank: row.bank, account_no: row.account_no },
      missing.has(Number(row.id))
    )
  )
}

/** One source for its page, with the public half of its SSH key (to give the bank). */
export async function sourceView(id: number) {
  const row = await db
    .from('statement_sources as s')
    .join('deposit_accounts as a', 'a.id', 's.deposit_account_id')
    .where('s.id', id)
    .select('s.*', 'a.bank', 'a.account_no')
    .first()
  if (!row) return null
  const source = sourceOf(row)
  const missing = (await missingStatements()).sources.some((entry) => entry.id === source.id)
  return {
    ...presentSource({ ...source, bank: row.bank, account_no: row.account_no }, missing),
    public_key: publicKeyOf(source),
  }
}

/** The files fetched (newest first), of one source or all, with where each came from and its import. */
export async function fetchedFiles(filters: { source?: number }, page: number, perPage = 25) {
  const query = db
    .from('statement_fetched_files as f')
    .join('statement_sources as s', 's.id', 'f.source_id')
    .leftJoin('statement_imports as i', 'i.id', 'f.import_id')
    .orderBy('f.id', 'desc')
    .select('f.*', 's.name as source_name', 's.kind as source_kind', 'i.line_count', 'i.new_lines')
  if (filters.source) query.where('f.source_id', filters.source)
  const result = await query.paginate(page, perPage)
  return {
    page: result,
    rows: result.all().map((row) => ({
      id: Number(row.id),
      source_id: Number(row.source_id),
      source_name: String(row.source_name),
      channel: String(row.channel),
      deposit_account_id: Number(row.deposit_account_id),
      remote_name: String(row.remote_name),
      file_name: String(row.file_name),
      sha256: String(row.sha256),
      size: Number(row.size),
      status: String(row.status),
      import_id: row.import_id === null ? null : Number(row.import_id),
      lines: row.line_count === null ? null : Number(row.line_count),
      new_lines: row.new_lines === null ? null : Number(row.new_lines),
      error: (row.error as string | null) ?? null,
      attempts: Number(row.attempts),
      fetched_at: shown(row.fetched_at),
      imported_at: shown(row.imported_at),
    })),
  }
}

/** A fetched file's name and where its kept copy is (the drive disk), or null. */
export async function keptFile(id: number) {
  const row = await db
    .from('statement_fetched_files')
    .where('id', id)
    .select('file_name', 'storage_key')
    .first()
  return row ? { fileName: String(row.file_name), storageKey: String(row.storage_key) } : null
}

/** The deposit accounts a source may fetch for, as the form's select offers them. */
export async function depositAccountChoices() {
  const rows = await db
    .from('deposit_accounts')
    .orderBy('id')
    .select('id', 'bank', 'account_no', 'deposit_group')
  return rows.map((row) => ({
    value: String(row.id),
    label: `${row.id} · ${row.bank} ${row.account_no} · ${row.deposit_group}`,
  }))
}
