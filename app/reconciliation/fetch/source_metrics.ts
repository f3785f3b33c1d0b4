import db from '@adonisjs/lucid/services/db'
import {
  statementFetchConsecutiveFailures,
  statementFetchLastSuccess,
  statementMissing,
} from '#metrics/registry'
import { missingStatements } from '#reconciliation/fetch/missing_statements'

/**
 * The statement sources' figures for /metrics, read from the database (the
 * same in every process): each enabled source's failure streak, last
 * success, and whether its day's statement is missing past its hour.
 */
export async function readStatementSourceFigures(now: Date = new Date()) {
  const rows = await db
    .from('statement_sources')
    .where('enabled', true)
    .select('id', 'deposit_account_id', 'kind', 'consecutive_failures', 'last_success_at')
  const missing = new Set((await missingStatements(now)).sources.map((source) => source.id))
  statementFetchConsecutiveFailures.reset()
  statementFetchLastSuccess.reset()
  statementMissing.reset()
  for (const row of rows) {
    const labels = {
      source: String(row.id),
      account: String(row.deposit_account_id),
      kind: String(row.kind),
    }
    statementFetchConsecutiveFailures.set(labels, Number(row.consecutive_failures))
    statementFetchLastSuccess.set(
      labels,
      row.last_success_at ? new Date(row.last_success_at).getTime() / 1000 : 0
    )
    statementMissing.set(labels, missing.has(Number(row.id)) ? 1 : 0)
  }
}
