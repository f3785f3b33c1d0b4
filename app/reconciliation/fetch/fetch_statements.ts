import { createHash, randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { SYSTEM } from '#core/actor'
import { recordAudit } from '#core/audit'
import { ActionError } from '#core/validation'
import { notify } from '#notifications/notifications'
import { statementFetchFailures } from '#metrics/registry'
import { ChannelError, describeError } from '#reconciliation/fetch/channel'
import { openSftp } from '#reconciliation/fetch/sftp_channel'
import { openImap } from '#reconciliation/fetch/imap_channel'
import {
  resumeAbandonedClaims,
  takeFile,
  type FileOutcome,
} from '#reconciliation/fetch/fetched_files'
import {
  decryptSourceSecret,
  findSource,
  lockSource,
  sourceOf,
  type StatementSource,
} from '#reconciliation/fetch/statement_sources'

/** How long one fetch holds its source: another fetch of it waits for the next round. */
export const LEASE_MS = 5 * 60_000
/** Files taken from an SFTP directory per fetch; the rest come with the next one. */
const SFTP_FILES_PER_FETCH = 100

export interface FetchResult {
  source_id: number
  /**
   * ok: the channel was read (files may be none); failed: it could not be,
   * or a file was refused (see `error`); busy: another fetch of this source
   * is running; disabled: the source is switched off.
   */
  status: 'ok' | 'failed' | 'busy' | 'disabled'
  files: FileOutcome[]
  error: string | null
}

/** The source's lease: at most one fetch of a source at a time, whichever worker runs it. */
async function takeLease(sourceId: number, token: string, force: boolean) {
  const now = new Date()
  const updated = await db
    .from('statement_sources')
    .where('id', sourceId)
    .if(!force, (query) => query.where('enabled', true))
    .where((query) => query.whereNull('fetch_lease_until').orWhere('fetch_lease_until', '<', now))
    .update({
      fetch_lease_until: new Date(now.getTime() + LEASE_MS),
      fetch_lease_token: token,
    })
  return Number(updated) === 1
}

async function releaseLease(sourceId: number, token: string) {
  await db
    .from('statement_sources')
    .where('id', sourceId)
    .where('fetch_lease_token', token)
    .update({ fetch_lease_until: null, fetch_lease_token: null })
}

/** The remote identity of an SFTP file as listed: a file rewritten in place is a new one. */
function remoteKey(parts: Array<string | number>) {
  return createHash('sha256').update(parts.join('\0')).digest('hex')
}

async function seenRemote(sourceId: number, key: string) {
  const row = await db
    .from('statement_remote_files')
    .where('source_id', sourceId)
    .where('remote_key', key)
    .select('id')
    .first()
  return Boolean(row)
}

async function rememberRemote(sourceId: number, key: string, name: string, fileId: number) {
  await db.rawQuery(
    `INSERT IGNORE INTO statement_remote_files (source_id, remote_key, remote_name, fetched_file_id, seen_at)
     VALUES (?, ?, ?, ?, ?)`,
    [sourceId, key, name.slice(0, 512), fileId, new Date()]
  )
}

/**
 * The SFTP directory: every matching file not fetched before (by path,
 * size and modification time), downloaded, taken (hashed, kept, claimed,
 * imported) and remembered; a file that changed while it was read (the
 * bank still writing it) is left for the next fetch. Remote files are
 * removed only when the source says so, and only once imported.
 */
/** An SFTP file: the server proved the pinned host key, and only our key logs in. */
const SFTP_VOUCH = 'sftp: pinned host key'

async function fetchSftp(source: StatementSource, outcomes: FileOutcome[]) {
  const session = await openSftp(source, decryptSourceSecret(source.secret_encrypted))
  try {
    let taken = 0
    for (const entry of await session.list()) {
      if (taken >= SFTP_FILES_PER_FETCH) break
      const key = remoteKey([entry.path, entry.size, entry.modifiedAt])
      if (await seenRemote(source.id, key)) continue
      const content = await session.download(entry)
      if (content.byteLength !== entry.size || !(await session.unchanged(entry))) continue
      taken++
      const outcome = await takeFile(source, {
        remoteName: entry.path,
        fileName: entry.name,
        content,
        vouchedBy: SFTP_VOUCH,
      })
      outcomes.push(outcome)
      if (outcome.outcome === 'busy' || outcome.fetched_file_id === null) continue
      await rememberRemote(source.id, key, entry.path, outcome.fetched_file_id)
      if (source.remove_after_import && outcome.outcome !== 'failed') await session.remove(entry)
    }
  } finally {
    await session.end()
  }
}

/**
 * The IMAP mailbox: mails FROM the bank's sender address above the last
 * UID read (a new UIDVALIDITY starts again from the first: the hashes keep
 * what was imported from being imported again), each attachment taken,
 * then the mail's UID kept. A mail from anyone else is passed over.
 */
async function fetchImap(source: StatementSource, outcomes: FileOutcome[]) {
  const session = await openImap(source, decryptSourceSecret(source.secret_encrypted))
  try {
    const sameMailbox = source.imap_uid_validity === session.uidValidity
    const afterUid = sameMailbox ? Number(source.imap_last_uid ?? 0) : 0
    for await (const mail of session.mailsAfter(afterUid)) {
      if ('files' in mail) {
        if (!mail.vouchedBy) {
          logger.warn(
            { source_id: source.id, uid: mail.uid, why: mail.notVouched },
            "statement mail not vouched for by the mail server: its files are held as a person's"
          )
        }
        for (const file of mail.files) {
          const outcome = await takeFile(source, file)
          outcomes.push(outcome)
          // Another fetch is importing it: read this mail again next time.
          if (outcome.outcome === 'busy') return
        }
      } else {
        logger.info({ source_id: source.id, uid: mail.uid, why: mail.skipped }, 'mail passed over')
      }
      await db
        .from('statement_sources')
        .where('id', source.id)
        .update({
          imap_uid_validity: session.uidValidity,
          imap_last_uid: sameMailbox
            ? db.raw('GREATEST(COALESCE(imap_last_uid, 0), ?)', [mail.uid])
            : mail.uid,
        })
      if (!sameMailbox) source.imap_uid_validity = session.uidValidity
    }
  } finally {
    await session.end()
  }
}

/**
 * Fetches one source now: its abandoned claims first, then the channel.
 * `force` fetches a source that is switched off, or not yet due (an
 * operator's "Fetch now" and `statements:fetch`); a fetch of the same
 * source already running makes this one `busy`. The outcome is recorded on
 * the source (last fetch, last success or error, the failure streak); a
 * failure counts in /metrics and, at the first of a streak, is a notice to
 * every admin.
 */
export async function fetchStatements(
  sourceId: number,
  options: { now?: Date; force?: boolean } = {}
): Promise<FetchResult> {
  const source = await findSource(sourceId)
  if (!source) throw ActionError.notFound('source', `no statement source ${sourceId}`)
  if (!source.enabled && !options.force) {
    return { source_id: source.id, status: 'disabled', files: [], error: null }
  }
  const token = randomUUID()
  if (!(await takeLease(source.id, token, options.force === true))) {
    return { source_id: source.id, status: 'busy', files: [], error: null }
  }
  const now = options.now ?? new Date()
  const files: FileOutcome[] = []
  let error: string | null = null
  try {
    files.push(...(await resumeAbandonedClaims(source)))
    if (source.kind === 'sftp') await fetchSftp(source, files)
    else await fetchImap(source, files)
  } catch (caught) {
    if (!(caught instanceof ChannelError)) {
      logger.error({ err: caught, source_id: source.id }, 'statement fetch failed')
    }
    error = describeError(caught)
  } finally {
    await releaseLease(source.id, token).catch(() => {})
  }
  const refused = files.filter((file) => file.outcome === 'failed')
  if (!error && refused.length > 0) {
    error = refused
      .map((file) => `${file.file_name}: ${file.error}`)
      .join('; ')
      .slice(0, 1000)
  }
  if (error) {
    await recordFailure(source.id, error, now)
    return { source_id: source.id, status: 'failed', files, error }
  }
  await db.from('statement_sources').where('id', source.id).update({
    last_fetched_at: now,
    last_success_at: now,
    last_error: null,
    consecutive_failures: 0,
  })
  return { source_id: source.id, status: 'ok', files, error: null }
}

/**
 * A failed fetch: the error and the streak on the source, the process's
 * counter; at the first failure of a streak, an audit row and a notice to
 * every admin (not one a minute while the bank's server is down).
 */
async function recordFailure(sourceId: number, error: string, now: Date) {
  await db.transaction(async (trx) => {
    const source = await lockSource(trx, sourceId)
    if (!source) return
    statementFetchFailures.labels(String(source.id)).inc()
    await trx
      .from('statement_sources')
      .where('id', source.id)
      .update({
        last_fetched_at: now,
        last_error: error,
        consecutive_failures: source.consecutive_failures + 1,
        failures_total: source.failures_total + 1,
      })
    if (source.consecutive_failures > 0) return
    const target = { type: 'statement_source', id: String(source.id) }
    await recordAudit(trx, SYSTEM, {
      action: 'statement_source.fetch_failed',
      target,
      details: { deposit_account_id: source.deposit_account_id, kind: source.kind, error },
    })
    await notify(trx, {
      kind: 'alert',
      action: 'statement_source.fetch_failed',
      summary: `Statements of deposit account ${source.deposit_account_id} could not be fetched from ${source.kind.toUpperCase()} source "${source.name}": ${error}`,
      actor: SYSTEM,
      target,
    })
  })
}

/**
 * The sources due for a fetch (enabled, and not fetched for their
 * interval), each fetched in turn; one that another worker is fetching is
 * `busy` and left to it. Returns each fetch's result.
 */
export async function fetchDueSources(now: Date = new Date()) {
  const rows = await db
    .from('statement_sources')
    .where('enabled', true)
    .where((query) =>
      query
        .whereNull('last_fetched_at')
        // A few seconds early: a fetch that took a moment must not push the next one a whole interval.
        .orWhereRaw('last_fetched_at <= ? - INTERVAL every_minutes MINUTE + INTERVAL 5 SECOND', [
          now,
        ])
    )
    .where((query) =>
      query.whereNull('fetch_lease_until').orWhere('fetch_lease_until', '<', new Date())
    )
    .orderByRaw('last_fetched_at IS NOT NULL, last_fetched_at')
    .orderBy('id')
  const results: FetchResult[] = []
  for (const row of rows) results.push(await fetchStatements(sourceOf(row).id, { now }))
  return results
}
