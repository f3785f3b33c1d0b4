import { runReconciliationCheck } from '#reconciliation/verify/index'
import { recordAudit } from '#core/audit'
import { inTransaction } from '#core/transaction'
import type { Actor } from '#core/actor'

/**
 * Someone checks the ledger against the bank now (the back-office's
 * "run the check", `reconcile:verify`): the whole-database check, recorded
 * in reconciliation_runs with them as actor, and its audit row with what it
 * found. The worker's daily run is the system's own and writes no audit row.
 * Returns the result and its problems counted by kind.
 */
export async function checkReconciliationNow(actor: Actor) {
  const result = await runReconciliationCheck(actor)
  const kinds: Record<string, number> = {}
  for (const problem of result.problems) kinds[problem.kind] = (kinds[problem.kind] ?? 0) + 1
  const stale = result.openReceivables.filter((item) => item.stale).length
  await inTransaction((trx) =>
    recordAudit(trx, actor, {
      action: 'reconciliation.check',
      details: {
        ok: result.ok,
        problems: result.problems.length,
        kinds,
        account_days: result.days.length,
        open_receivables: result.openReceivables.length,
        stale_receivables: stale,
        unclaimed_lines: result.unclaimed.lines,
        unclaimed_amount: result.unclaimed.amount,
      },
    })
  )
  return { result, kinds }
}
