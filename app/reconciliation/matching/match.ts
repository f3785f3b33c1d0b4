import { inTransaction } from '#core/transaction'
import type { MatchResult } from '#reconciliation/matching/line_row'
import { settleLines } from '#reconciliation/matching/settle'

/**
 * Matches one new statement line, in its own transaction with the line row
 * locked: a line is matched once even if two workers try, and the unique
 * (order_type, order_id) key stops an order from being settled by two lines.
 */
export async function matchStatementLine(lineId: number): Promise<MatchResult> {
  const results = await matchLines([lineId])
  return results.get(lineId) ?? 'skipped'
}

/**
 * Judges and settles these lines in one transaction (`settleLines`): the
 * rules decide on rows nobody else can change until the commit, so an order
 * paid or expired by another path since the caller last looked is judged as
 * it is now. The orders the lines pay are written together
 * (transitionPayments: their postings, slots, callback rows, states and
 * events in a few statements) and commit with their lines' status and
 * claims. A deadlock rolls the whole attempt back; running it again is safe.
 */
export async function matchLines(lineIds: number[]): Promise<Map<number, MatchResult>> {
  return inTransaction((trx) => settleLines(trx, lineIds), { isolationLevel: 'read committed' })
}
