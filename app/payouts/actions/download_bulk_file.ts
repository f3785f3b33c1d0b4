import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** A file name export_bulk_file gives: `<batch id>-<bank>.csv`. */
const BULK_FILE_NAME = /^B\d{14}[A-Z0-9]{6}-[A-Z]{2,5}\.csv$/

/**
 * A bulk payout file exported earlier, downloaded again: its path in
 * `directory`, audited (it holds account numbers); null when no such file
 * is on this server (nothing audited).
 */
export async function downloadBulkFile(
  directory: string,
  name: string,
  actor: Actor
): Promise<string | null> {
  const path = join(directory, name)
  const found = BULK_FILE_NAME.test(name) && (await stat(path).catch(() => null))?.isFile()
  if (!found) return null
  await inTransaction((trx) =>
    recordAudit(trx, actor, {
      action: 'payouts.file_download',
      target: { type: 'payout_batch', id: name.slice(0, 21) },
      details: { file: name },
    })
  )
  return path
}
