import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { bankAccountCode, depositAccountOfCode, GATEWAY_OWNER } from '#ledger/accounts'
import { formatThb } from '#core/money'
import { gatewayDaySql } from '#core/clock'
import { lineScope, POSTED, SIGNED, sum } from '#reconciliation/verify/sql'
import type { BankDay, CheckScope, Problem } from '#reconciliation/verify/types'

/** Per account: satang its statement lines or its ledger bank account moved. */
export type AccountMovement = Map<number, number>

/**
 * Per deposit account and bank day, the ledger's bank account moved by
 * exactly what the imported statement lines say (bank_day_drift); a posting
 * on a bank account without a value date belongs to no day
 * (bank_posting_without_day). Also returns, per account, the movement of its
 * lines that print no balance and its ledger bank account's whole movement,
 * which the printed balances are checked against (printed_balance_drift.ts).
 */
export async function checkBankDays(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<{
  problems: Problem[]
  days: BankDay[]
  unprinted: AccountMovement
  ledgerMoved: AccountMovement
}> {
  const lines = lineScope(scope)
  const problems: Problem[] = []
  const [lineDays] = await trx.rawQuery(
    `SELECT l.deposit_account_id, ${gatewayDaySql('l.line_at')} AS day,
            SUM(CASE WHEN l.direction = 'credit' THEN l.amount ELSE 0 END) AS credits,
            SUM(CASE WHEN l.direction = 'debit' THEN l.amount ELSE 0 END) AS debits,
            SUM(CASE WHEN l.balance_after IS NULL AND ${POSTED('l')} THEN ${SIGNED('l')} ELSE 0 END)
              AS unprinted
       FROM statement_lines l ${lines.index} WHERE ${POSTED('l')}${lines.where}
      GROUP BY l.deposit_account_id, day`,
    lines.bindings as any[]
  )
  const ledgerFilter = scope
    ? ` AND a.code = ?${scope.from ? ' AND (t.value_date IS NULL OR t.value_date >= ?)' : ''}${scope.to ? ' AND (t.value_date IS NULL OR t.value_date <= ?)' : ''}`
    : " AND a.code LIKE 'bank:%'"
  const [ledgerDays] = await trx.rawQuery(
    `SELECT a.code, DATE_FORMAT(t.value_date, '%Y-%m-%d') AS day, SUM(e.amount) AS total
       FROM ledger_entries e
       JOIN ledger_accounts a ON a.id = e.account_id
       JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner = ?${ledgerFilter}
      GROUP BY a.code, day`,
    [
      GATEWAY_OWNER,
      ...(scope ? [bankAccountCode(scope.depositAccountId)] : []),
      ...(scope?.from ? [scope.from] : []),
      ...(scope?.to ? [scope.to] : []),
    ]
  )
  const days = new Map<string, BankDay>()
  const dayOf = (depositAccountId: number, day: string) => {
    const name = `${depositAccountId}|${day}`
    let entry = days.get(name)
    if (!entry) {
      entry = { depositAccountId, day, credits: 0, debits: 0, ledgerNet: 0 }
      days.set(name, entry)
    }
    return entry
  }
  const unprinted: AccountMovement = new Map()
  const ledgerMoved: AccountMovement = new Map()
  for (const row of lineDays) {
    const entry = dayOf(Number(row.deposit_account_id), row.day)
    entry.credits = sum(row.credits)
    entry.debits = sum(row.debits)
    const accountId = Number(row.deposit_account_id)
    unprinted.set(accountId, (unprinted.get(accountId) ?? 0) + sum(row.unprinted))
  }
  for (const row of ledgerDays) {
    const accountId = depositAccountOfCode(row.code)
    if (accountId === null) continue
    ledgerMoved.set(accountId, (ledgerMoved.get(accountId) ?? 0) - sum(row.total))
    if (row.day === null) {
      problems.push({
        kind: 'bank_posting_without_day',
        detail: `bank account of deposit account ${accountId} has ${formatThb(-sum(row.total))} THB posted without a bank day`,
        depositAccountId: accountId,
      })
      continue
    }
    // Assets carry the ledger's negative sign: money in is a negative entry.
    dayOf(accountId, row.day).ledgerNet = -sum(row.total)
  }
  for (const entry of days.values()) {
    if (entry.ledgerNet !== entry.credits - entry.debits) {
      problems.push({
        kind: 'bank_day_drift',
        detail:
          `deposit account ${entry.depositAccountId}, ${entry.day}: the statement says ` +
          `${formatThb(entry.credits - entry.debits)} THB net in, the ledger's bank account ${formatThb(entry.ledgerNet)}`,
        depositAccountId: entry.depositAccountId,
        day: entry.day,
      })
    }
  }
  return {
    problems,
    days: [...days.values()].sort(
      (a, b) => a.depositAccountId - b.depositAccountId || a.day.localeCompare(b.day)
    ),
    unprinted,
    ledgerMoved,
  }
}
