import { createHash, randomUUID } from 'node:crypto'
import drive from '@adonisjs/drive/services/main'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { SYSTEM } from '#core/actor'
import { ActionError } from '#core/validation'
import { importStatement } from '#reconciliation/actions/import_statement'
import type { ChannelFile } from '#reconciliation/fetch/channel'
import type { StatementSource } from '#reconciliation/fetch/statement_sources'

/**
 * How long a fetch owns a file it claimed: past this, a fetch that died
 * between the claim and the import (a crash, a lost worker) is taken over
 * by the next fetch, which imports the kept copy.
 */
export const CLAIM_MS = 10 * 60_000

/** What became of one fetched file. */
export interface FileOutcome {
  remote_name: string
  file_name: string
  sha256: string
  size: number
  /**
   * imported: this fetch imported it; known: imported (or refused) before,
   * nothing done; busy: another fetch holds its claim now; failed: the
   * import refused it (the reason in `error`, kept on the file's row).
   */
  outcome: 'imported' | 'known' | 'busy' | 'failed'
  fetched_file_id: number | null
  import_id: number | null
  error: string | null
}

/** `statements/<account>/<sha256>.<ext>` on the configured drive disk (config/drive.ts). */
function storageKeyOf(accountId: number, sha256: string, fileName: string) {
  const extension = /\.([A-Za-z0-9]{1,5})$/.exec(fileName)?.[1]?.toLowerCase()
  return `statements/${accountId}/${sha256}${extension ? `.${extension}` : ''}`
}

interface ClaimedFile {
  id: number
  token: string
  storageKey: string
}

/**
 * Claims a file for import: the row of (account, sha256) inserted, whose
 * unique key lets exactly one fetch win however many fetch the same
 * content at once (two workers, two sources of one account, a file mailed
 * and dropped). The loser reads the winner's row: imported or refused
 * (`known`), or being imported now (`busy`); a claim whose time ran out
 * (its fetch died) is taken over.
 */
async function claim(
  source: StatementSource,
  file: ChannelFile,
  sha256: string,
  storageKey: string
): Promise<ClaimedFile | { outcome: 'known' | 'busy'; id: number }> {
  const token = randomUUID()
  const now = new Date()
  const [result] = await db.rawQuery(
    `INSERT IGNORE INTO statement_fetched_files
       (source_id, deposit_account_id, channel, remote_name, file_name, sha256, size, storage_key,
        status, claim_token, claimed_until, attempts, fetched_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'claimed', ?, ?, 1, ?)`,
    [
      source.id,
      source.deposit_account_id,
      source.kind,
      file.remoteName.slice(0, 512),
      file.fileName.slice(0, 255),
      sha256,
      file.content.byteLength,
      storageKey,
      token,
      new Date(now.getTime() + CLAIM_MS),
      now,
    ]
  )
  if (Number(result.affectedRows) === 1) {
    return { id: Number(result.insertId), token, storageKey }
  }
  const existing = await db
    .from('statement_fetched_files')
    .where('deposit_account_id', source.deposit_account_id)
    .where('sha256', sha256)
    .first()
  if (!existing) throw new Error(`statement file ${sha256} neither inserted nor found`)
  if (existing.status !== 'claimed') return { outcome: 'known', id: Number(existing.id) }
  const taken = await takeOver(existing, now)
  return taken ?? { outcome: 'busy', id: Number(existing.id) }
}

/** Takes over a claim whose time ran out; null when it has not, or another fetch took it first. */
async function takeOver(row: Record<string, any>, now: Date): Promise<ClaimedFile | null> {
  if (new Date(row.claimed_until).getTime() > now.getTime()) return null
  const token = randomUUID()
  const updated = await db
    .from('statement_fetched_files')
    .where('id', row.id)
    .where('status', 'claimed')
    .where('claim_token', row.claim_token)
    .update({
      claim_token: token,
      claimed_until: new Date(now.getTime() + CLAIM_MS),
      attempts: db.raw('attempts + 1'),
    })
  if (Number(updated) !== 1) return null
  logger.warn(
    { fetched_file_id: row.id, attempts: Number(row.attempts) + 1 },
    'statement file claim taken over: its fetch did not finish'
  )
  return { id: Number(row.id), token, storageKey: String(row.storage_key) }
}

/**
 * Imports a claimed file with the source's origin, and records the result
 * on its row (under the claim's token: a fetch whose claim was taken over
 * records nothing). An import of the same content from the bank's channel
 * already on the account (the fetch died after importing, before
 * recording) is adopted rather than made again.
 */
async function importClaimed(
  source: StatementSource,
  claimed: ClaimedFile,
  file: ChannelFile,
  sha256: string
): Promise<Pick<FileOutcome, 'outcome' | 'import_id' | 'error'>> {
  const earlier = await db
    .from('statement_imports')
    .where('deposit_account_id', source.deposit_account_id)
    .where('file_sha256', sha256)
    .whereIn('origin', ['sftp', 'imap'])
    .orderBy('id')
    .select('id')
    .first()
  let importId: number
  try {
    importId = earlier
      ? Number(earlier.id)
      : (
          await importStatement(
            {
              deposit_account_id: source.deposit_account_id,
              file_name: file.fileName.slice(0, 255),
              content: file.content,
              ...(source.layout ? { layout: source.layout } : {}),
            },
            SYSTEM,
            {
              origin: {
                channel: source.kind,
                detail:
                  source.kind === 'imap' ? `${file.remoteName} ${file.fileName}` : file.remoteName,
                vouchedBy: file.vouchedBy,
              },
            }
          )
        ).importId
  } catch (error) {
    if (!(error instanceof ActionError)) throw error
    const message = error.message.replace(/\s+/g, ' ').slice(0, 1000)
    await db
      .from('statement_fetched_files')
      .where('id', claimed.id)
      .where('claim_token', claimed.token)
      .update({ status: 'failed', error: message })
    return { outcome: 'failed', import_id: null, error: message }
  }
  await db
    .from('statement_fetched_files')
    .where('id', claimed.id)
    .where('claim_token', claimed.token)
    .update({ status: 'imported', import_id: importId, imported_at: new Date(), error: null })
  return { outcome: 'imported', import_id: importId, error: null }
}

/**
 * One file from the bank's channel: hashed, kept on the drive disk (under
 * its hash, so keeping it twice writes the same object), claimed, and
 * imported once per account.
 */
export async function takeFile(source: StatementSource, file: ChannelFile): Promise<FileOutcome> {
  const sha256 = createHash('sha256').update(file.content).digest('hex')
  const storageKey = storageKeyOf(source.deposit_account_id, sha256, file.fileName)
  const base = {
    remote_name: file.remoteName,
    file_name: file.fileName,
    sha256,
    size: file.content.byteLength,
  }
  await drive.use().put(storageKey, file.content)
  const claimed = await claim(source, file, sha256, storageKey)
  if ('outcome' in claimed) {
    return {
      ...base,
      outcome: claimed.outcome,
      fetched_file_id: claimed.id,
      import_id: null,
      error: null,
    }
  }
  const result = await importClaimed(source, claimed, file, sha256)
  return { ...base, ...result, fetched_file_id: claimed.id }
}

/**
 * The source's claims whose fetch died before recording the import:
 * imported now from the kept copy (the remote file may be gone by now).
 */
export async function resumeAbandonedClaims(source: StatementSource): Promise<FileOutcome[]> {
  const now = new Date()
  const rows = await db
    .from('statement_fetched_files')
    .where('source_id', source.id)
    .where('status', 'claimed')
    .where('claimed_until', '<', now)
    .orderBy('id')
    .limit(20)
  const outcomes: FileOutcome[] = []
  for (const row of rows) {
    const claimed = await takeOver(row, now)
    if (!claimed) continue
    const content = Buffer.from(await drive.use().getBytes(claimed.storageKey))
    const file = {
      remoteName: String(row.remote_name),
      fileName: String(row.file_name),
      content,
      // The mail's verdict was not kept: a mail's file taken over is a person's file.
      vouchedBy: source.kind === 'sftp' ? 'sftp: pinned host key' : null,
    }
    const result = await importClaimed(source, claimed, file, String(row.sha256))
    outcomes.push({
      remote_name: file.remoteName,
      file_name: file.fileName,
      sha256: String(row.sha256),
      size: content.byteLength,
      ...result,
      fetched_file_id: claimed.id,
    })
  }
  return outcomes
}

/** Bytes of a kept file (the back-office's download). */
export async function keptFile(storageKey: string) {
  return Buffer.from(await drive.use().getBytes(storageKey))
}
