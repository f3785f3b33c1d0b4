import type Operator from '#operators/models/operator'
import { NEW_STATEMENT_SOURCE_TARGET } from '#reconciliation/fetch/save_statement_source'
import { fetchedFiles, listSources } from '#admin/queries/statement_sources'
import { liveRequestTargets } from '#admin/queries/pending_targets'
import { pendingRequestsOnTargets } from '#admin/views/pending_additions'

/**
 * The statement sources page: every source by deposit account, the new
 * sources waiting for a second admin, and the files fetched most recently.
 */
export async function statementSourcesPage(operator: Operator) {
  const sources = await listSources()
  const accounts = new Map<number, { id: number; account: string; sources: typeof sources }>()
  for (const source of sources) {
    const entry = accounts.get(source.deposit_account_id) ?? {
      id: source.deposit_account_id,
      account: source.account,
      sources: [],
    }
    entry.sources.push(source)
    accounts.set(source.deposit_account_id, entry)
  }
  const additions = await liveRequestTargets([NEW_STATEMENT_SOURCE_TARGET])
  const recent = await fetchedFiles({}, 1, 10)
  return {
    accounts: [...accounts.values()],
    total: sources.length,
    pendingAdditions: await pendingRequestsOnTargets(
      operator,
      NEW_STATEMENT_SOURCE_TARGET,
      additions.map((row) => row.targetId)
    ),
    files: recent.rows,
  }
}
