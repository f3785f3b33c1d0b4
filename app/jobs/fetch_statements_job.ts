import { fetchDueSources } from '#reconciliation/fetch/fetch_statements'
import { checkMissingStatements } from '#reconciliation/fetch/missing_statements'

/**
 * statements.fetch — every minute: fetches the statement sources that are
 * due (each at most once at a time, by its lease; each file imported once,
 * by its claim), then tells the statements missing past their hour (once a
 * day per source). Idempotent.
 */
export default async function fetchStatementsJob() {
  const now = new Date()
  const fetched = await fetchDueSources(now)
  const missing = await checkMissingStatements(now)
  return {
    fetched: fetched.map(({ source_id, status, files }) => ({
      source_id,
      status,
      files: files.length,
    })),
    missing: missing.missing,
  }
}
