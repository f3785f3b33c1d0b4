import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { formatThb } from '#core/money'
import type { AccountMovement } from '#reconciliation/verify/bank_day_drift'
import { lineScope, POSTED, SIGNED, sum } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

interface WalkRow {
  id: number
  accountId: number
  direction: 'credit' | 'debit'
  amount: number
  balance: number
  prevId: number | null
  prevBalance: number | null
  nextId: number | null
}

const signed = (row: { direction: string; amount: number }) =>
  row.direction === 'credit' ? row.amount : -row.amount

/**
 * The running balances the bank printed (balance_after), which no row of
 * ours adds up: an account's lines, walked in the bank's order, each
 * following the one before it (printed_balance_break: a line changed or
 * deleted after its import, which checked the chain); and the ledger's bank
 * account moved by the last printed balance less the one before the first
 * line, plus the lines that print none (printed_balance_drift).
 *
 * The bank's order is the line's time, then, for lines of one minute (a
 * KBank export prints no seconds), the order of their file: lines are stored
 * in the file's order, oldest or newest first. A file is newest first when
 * its first stored line is later than its last, or, all of one minute, when
 * its first two balances say so as the import read them (BalanceChain).
 * Two passes over the lines that print a balance (their files, then one
 * window in the bank's order); only the breaks and each account's first and
 * last line are read back.
 */
export async function checkPrintedBalances(
  trx: TransactionClientContract,
  scope: CheckScope | undefined,
  moved: { unprinted: AccountMovement; ledgerMoved: AccountMovement }
): Promise<Problem[]> {
  const lines = lineScope(scope)
  const printed = `l.balance_after IS NOT NULL AND ${POSTED('l')}`
  const next = `SELECT n.%s FROM statement_lines n
                 WHERE n.import_id = f.import_id AND n.id > f.first_id
                   AND n.balance_after IS NOT NULL AND ${POSTED('n')}
                 ORDER BY n.id LIMIT 1`
  const [rows] = await trx.rawQuery(
    `WITH files AS (
       SELECT l.import_id, MIN(l.id) AS first_id, MAX(l.id) AS last_id
         FROM statement_lines l ${lines.index}
        WHERE ${printed}${lines.where}
        GROUP BY l.import_id
     ), file_order AS (
       SELECT f.import_id,
              CASE WHEN a.line_at > z.line_at THEN -1
                   WHEN a.line_at < z.line_at THEN 1
                   WHEN (${next.replace('%s', `balance_after - ${SIGNED('n')}`)}) = a.balance_after THEN 1
                   WHEN (${next.replace('%s', 'balance_after')}) = a.balance_after - ${SIGNED('a')} THEN -1
                   ELSE 1 END AS dir
         FROM files f
         JOIN statement_lines a ON a.id = f.first_id
         JOIN statement_lines z ON z.id = f.last_id
        -- One row per file already: grouped so that it is computed once per
        -- file, not merged into the walk and computed again for every line.
        GROUP BY f.import_id
     ), walk AS (
       SELECT l.id, l.deposit_account_id, l.direction, l.amount, l.balance_after,
              ROW_NUMBER() OVER w AS seq,
              LAG(l.id) OVER w AS prev_id,
              LAG(l.balance_after) OVER w AS prev_balance,
              LEAD(l.id) OVER w AS next_id
         FROM statement_lines l ${lines.index}
         JOIN file_order o ON o.import_id = l.import_id
        WHERE ${printed}${lines.where}
       WINDOW w AS (PARTITION BY l.deposit_account_id
                    ORDER BY l.line_at, l.import_id, o.dir * CAST(l.id AS SIGNED))
     )
     SELECT * FROM walk
      WHERE prev_id IS NULL OR next_id IS NULL
         OR prev_balance + ${SIGNED('walk')} <> balance_after
      ORDER BY deposit_account_id, seq`,
    [...lines.bindings, ...lines.bindings] as any[]
  )
  const walked: WalkRow[] = (rows as Array<Record<string, any>>).map((row) => ({
    id: Number(row.id),
    accountId: Number(row.deposit_account_id),
    direction: row.direction,
    amount: sum(row.amount),
    balance: sum(row.balance_after),
    prevId: row.prev_id === null ? null : Number(row.prev_id),
    prevBalance: row.prev_balance === null ? null : sum(row.prev_balance),
    nextId: row.next_id === null ? null : Number(row.next_id),
  }))

  const problems: Problem[] = []
  const ends = new Map<number, { first?: WalkRow; last?: WalkRow }>()
  // Breaks already named with the line before them.
  const named = new Set<number>()
  for (const [index, row] of walked.entries()) {
    const end = ends.get(row.accountId) ?? {}
    ends.set(row.accountId, end)
    if (row.prevId === null) end.first = row
    if (row.nextId === null) end.last = row
    if (row.prevId === null || named.has(row.id)) continue
    const expected = row.prevBalance! + signed(row)
    if (expected === row.balance) continue
    // A balance changed on one line breaks the chain on both sides of it,
    // while its neighbours still follow each other: one problem, that line.
    const after = walked[index + 1]
    if (after?.prevId === row.id && expected + signed(after) === after.balance) {
      named.add(after.id)
      problems.push({
        kind: 'printed_balance_break',
        detail:
          `deposit account ${row.accountId}: statement line #${row.id} prints a balance of ${formatThb(row.balance)} THB, ` +
          `where line #${row.prevId} before it (${formatThb(row.prevBalance!)} THB) and line #${after.id} after it ` +
          `(${formatThb(after.balance)} THB) say ${formatThb(expected)} THB: its balance was changed after import`,
        depositAccountId: row.accountId,
      })
      continue
    }
    problems.push({
      kind: 'printed_balance_break',
      detail:
        `deposit account ${row.accountId}: statement line #${row.id} (${row.direction} ${formatThb(row.amount)} THB) ` +
        `prints a balance of ${formatThb(row.balance)} THB after line #${row.prevId}'s ${formatThb(row.prevBalance!)} THB, ` +
        `where ${formatThb(expected)} THB follows: ${formatThb(row.balance - expected)} THB between them is not on ` +
        'the statement; a line was changed or deleted after import',
      depositAccountId: row.accountId,
    })
  }

  for (const [accountId, { first, last }] of ends) {
    if (!first || !last) continue
    const opening = first.balance - signed(first)
    const unprinted = moved.unprinted.get(accountId) ?? 0
    const expected = last.balance - opening + unprinted
    const ledger = moved.ledgerMoved.get(accountId) ?? 0
    if (ledger === expected) continue
    problems.push({
      kind: 'printed_balance_drift',
      detail:
        `deposit account ${accountId}: the bank printed ${formatThb(opening)} THB before statement line #${first.id} ` +
        `and ${formatThb(last.balance)} THB after line #${last.id}, ${formatThb(last.balance - opening)} THB net in` +
        (unprinted === 0
          ? ''
          : ` (${formatThb(expected)} THB with the lines that print no balance)`) +
        `; the ledger's bank account moved ${formatThb(ledger)} THB`,
      depositAccountId: accountId,
    })
  }
  return problems
}
