import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type DepositAccount from '#payments/models/deposit_account'
import type { ParsedStatementLine } from '#reconciliation/statement_line'
import {
  matchStatementLine,
  mayBeClaimed,
  NO_ORDER_NOTE,
  type MatchResult,
} from '#reconciliation/match_line'
import { withDeadlockRetry } from '#core/db_retry'
import type { Actor } from '#core/actor'

export interface ImportSummary {
  importId: number
  lines: number
  newLines: number
  results: Record<MatchResult, number>
}

const BATCH = 1000

/**
 * Stores a parsed statement of one deposit account in the caller's
 * transaction: one `statement_imports` row, then each line under a
 * fingerprint unique per account (a line already known adds nothing).
 * Identical lines in one file (two transfers of the same amount in the same
 * minute) are kept apart by their occurrence number. Returns the import id
 * and how many lines were new.
 */
export async function storeStatement(
  trx: TransactionClientContract,
  statement: {
    account: DepositAccount
    layout: string
    fileName: string
    fileSha256: string
    lines: ParsedStatementLine[]
    actor: Actor
  }
) {
  const { account, lines } = statement
  const [importId] = await trx.table('statement_imports').insert({
    deposit_account_id: account.id,
    layout: statement.layout,
    file_name: statement.fileName.slice(-255),
    file_sha256: statement.fileSha256,
    line_count: lines.length,
    new_lines: 0,
    actor: statement.actor.name.slice(0, 120),
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
  let newLines = 0
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH)
    const columns = Object.keys(batch[0])
    const placeholders = batch.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')
    const [result] = await trx.rawQuery(
      `INSERT IGNORE INTO statement_lines (${columns.join(', ')}) VALUES ${placeholders}`,
      batch.flatMap((row) => Object.values(row))
    )
    newLines += Number(result.affectedRows)
  }
  await trx.from('statement_imports').where('id', importId).update({ new_lines: newLines })
  return { importId: Number(importId), newLines }
}

/**
 * Matches the lines an import stored, after it committed. Lines no order can
 * claim (by the matcher's own rules, `mayBeClaimed`) get the matcher's
 * verdict in bulk; each other line is matched in its own transaction. Lines
 * an earlier import of the account stored but did not get to match (it
 * stopped half-way) are matched too.
 */
export async function matchImport(accountId: number, importId: number) {
  const results: Record<MatchResult, number> = { matched: 0, unmatched: 0, late: 0, skipped: 0 }
  const lines: Array<{ id: number | string; direction: 'credit' | 'debit' }> = await db
    .from('statement_lines')
    .where('import_id', importId)
    .orderBy('id')
    .select('id', 'direction')
  const claimable = new Set(
    (
      await mayBeClaimed(db.from('statement_lines').where('import_id', importId)).select(
        'statement_lines.id'
      )
    ).map((row: { id: number | string }) => Number(row.id))
  )
  for (const direction of ['credit', 'debit'] as const) {
    const ids = lines
      .filter((line) => line.direction === direction && !claimable.has(Number(line.id)))
      .map((line) => Number(line.id))
    for (let start = 0; start < ids.length; start += BATCH) {
      const updated = await withDeadlockRetry(() =>
        db
          .from('statement_lines')
          .whereIn('id', ids.slice(start, start + BATCH))
          .where('status', 'new')
          .update({ status: 'unmatched', note: NO_ORDER_NOTE[direction] })
      )
      results.unmatched += Number(updated)
    }
  }
  for (const id of [...claimable].sort((a, b) => a - b)) {
    results[await matchStatementLine(id)]++
  }
  const leftovers = await db
    .from('statement_lines')
    .where('deposit_account_id', accountId)
    .where('status', 'new')
    .where('import_id', '<', importId)
    .select('id')
  for (const { id } of leftovers) results[await matchStatementLine(Number(id))]++
  return results
}
