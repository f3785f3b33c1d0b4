import { bankReferenceSql } from '#reconciliation/receipts'
import type { CheckScope } from '#reconciliation/verify/types'

/** The SQL pieces the checks share, and the statement lines of a scope. */

export const sum = (value: unknown) => Number(value ?? 0)

/** Lines that are in the ledger: not those of a statement held for confirmation or discarded. */
export const POSTED = (alias: string) => `${alias}.status NOT IN ('held', 'discarded')`

/** What a line does to its account's balance, in SQL: + a credit, − a debit. */
export const SIGNED = (alias: string) =>
  `IF(${alias}.direction = 'credit', ${alias}.amount, -${alias}.amount)`

/** A line whose trans_ref is the bank's transaction reference (receipts.ts, bankReferenceSql). */
export const BANK_REFERENCE = (alias: string) => `${bankReferenceSql(alias)} IS NOT NULL`

/** Bangkok midnight (GMT+7) of a `YYYY-MM-DD` bank day, as an instant. */
export function bankDayStart(day: string) {
  return new Date(Date.parse(`${day}T00:00:00+07:00`))
}

/**
 * SQL conditions on the statement lines `l` of the scope, with their
 * bindings: the account's, and in the range of days through the index
 * starting with line_at (a range of days reads that range, not the
 * account's history).
 */
export function lineScope(scope: CheckScope | undefined) {
  if (!scope) return { index: '', where: '', bindings: [] as unknown[] }
  const where = [' AND l.deposit_account_id = ?']
  const bindings: unknown[] = [scope.depositAccountId]
  if (scope.from) {
    where.push(' AND l.line_at >= ?')
    bindings.push(bankDayStart(scope.from))
  }
  if (scope.to) {
    where.push(' AND l.line_at < ?')
    bindings.push(new Date(bankDayStart(scope.to).getTime() + 86_400_000))
  }
  const ranged = Boolean(scope.from || scope.to)
  return {
    index: ranged ? 'FORCE INDEX (statement_lines_match_rate_index)' : '',
    where: where.join(''),
    bindings,
  }
}

/** SQL condition on the receipt claims `c` of the scope's account, with its binding. */
export function claimScope(scope: CheckScope | undefined) {
  return {
    where: scope ? ' AND c.deposit_account_id = ?' : '',
    bindings: scope ? [scope.depositAccountId] : [],
  }
}
