import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import type DepositAccount from '#models/deposit_account'
import { LAYOUTS, type StatementLayout } from '#reconciliation/layouts/index'
import type { ParsedStatementLine } from '#reconciliation/statement_line'
import { matchStatementLine, type MatchResult } from '#reconciliation/match_line'
import { withDeadlockRetry } from '#services/db_retry'

export interface ImportSummary {
  importId: number
  lines: number
  newLines: number
  results: Record<MatchResult, number>
}

const BATCH = 1000

/**
 * Imports a statement file for one deposit account: parse (all or nothing),
 * store each line under a fingerprint that is unique per account (importing
 * the same file twice adds nothing), then match every new line. Identical
 * lines in one file (two transfers of the same amount in the same minute) are
 * kept apart by their occurrence number.
 */
export async function importStatement(
  account: DepositAccount,
  layout: StatementLayout | 'sandbox',
  fileName: string,
  content: string | ParsedStatementLine[],
  actor: string
): Promise<ImportSummary> {
  const lines = typeof content === 'string' ? LAYOUTS[layout as StatementLayout](content) : content
  const fileSha = createHash('sha256')
    .update(typeof content === 'string' ? content : JSON.stringify(content))
    .digest('hex')

  const [importId] = await db.table('statement_imports').insert({
    deposit_account_id: account.id,
    layout,
    file_name: fileName.slice(-255),
    file_sha256: fileSha,
    line_count: lines.length,
    new_lines: 0,
    actor,
    created_at: new Date(),
  })

  const seen = new Map<string, number>()
  const rows = lines.map((line) => {
    const key = [
      line.lineAt.toISOString(),
      line.direction,
      line.amount,
      line.reference ?? '',
      line.description,
    ].join('|')
    const occurrence = (seen.get(key) ?? 0) + 1
    seen.set(key, occurrence)
    return {
      deposit_account_id: account.id,
      import_id: importId,
      fingerprint: createHash('sha256').update(`${account.id}|${key}|${occurrence}`).digest('hex'),
      line_at: line.lineAt,
      direction: line.direction,
      amount: line.amount,
      reference: line.reference,
      description: line.description,
      status: 'new',
      created_at: new Date(),
    }
  })
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH)
    const columns = Object.keys(batch[0])
    const placeholders = batch.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')
    // Concurrent imports of overlapping files insert the same fingerprints; InnoDB
    // may pick one as a deadlock victim, and the insert is simply run again.
    await withDeadlockRetry(() =>
      db.rawQuery(
        `INSERT IGNORE INTO statement_lines (${columns.join(', ')}) VALUES ${placeholders}`,
        batch.flatMap((row) => Object.values(row))
      )
    )
  }

  const results: Record<MatchResult, number> = { matched: 0, unmatched: 0, late: 0, skipped: 0 }
  // Lines that carry this import's id are the ones it added.
  const { candidates, unmatched } = await triage(account.id, importId)
  const newLines = candidates.length + unmatched.length
  await db.from('statement_imports').where('id', importId).update({ new_lines: newLines })
  for (let start = 0; start < unmatched.length; start += BATCH) {
    // Lines no order can claim are settled in bulk; matchStatementLine would
    // reach the same verdict one transaction at a time.
    const ids = unmatched.slice(start, start + BATCH)
    const updated = await withDeadlockRetry(() =>
      db
        .from('statement_lines')
        .whereIn('id', ids)
        .where('status', 'new')
        .update({ status: 'unmatched', note: 'no open order' })
    )
    results.unmatched += Number(updated)
  }
  for (const id of candidates) results[await matchStatementLine(id)]++
  // Lines an earlier import stored but did not get to match (it stopped half-way).
  const leftovers = await db
    .from('statement_lines')
    .where('deposit_account_id', account.id)
    .where('status', 'new')
    .where('import_id', '<', importId)
    .select('id')
  for (const { id } of leftovers) results[await matchStatementLine(Number(id))]++
  return { importId: Number(importId), lines: lines.length, newLines, results }
}

/**
 * Splits an import's new lines into those an order could claim (credits with
 * a reference or with the transfer_amount of an open or recently expired
 * order on the account, lines naming a payout) and those nothing can claim.
 */
async function triage(accountId: number, importId: number) {
  const lines = await db
    .from('statement_lines')
    .where('import_id', importId)
    .orderBy('id')
    .select('id', 'direction', 'amount', 'reference')
  const open = await db
    .from('payment_orders')
    .where('deposit_account_id', accountId)
    .whereNotNull('slot_amount')
    .select('slot_amount')
  const expired = await db
    .from('payment_orders')
    .where('deposit_account_id', accountId)
    .where('status', 'error')
    .where('expire_at', '>=', new Date(Date.now() - 7 * 86400_000))
    .distinct('transfer_amount')
  const claimable = new Set([
    ...open.map((row) => Number(row.slot_amount)),
    ...expired.map((row) => Number(row.transfer_amount)),
  ])
  const candidates: number[] = []
  const unmatched: number[] = []
  for (const line of lines) {
    const mayMatch =
      line.reference !== null || (line.direction === 'credit' && claimable.has(Number(line.amount)))
    ;(mayMatch ? candidates : unmatched).push(Number(line.id))
  }
  return { candidates, unmatched }
}
