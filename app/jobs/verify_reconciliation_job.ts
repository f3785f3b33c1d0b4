import logger from '@adonisjs/core/services/logger'
import { runReconciliationCheck } from '#reconciliation/verify/index'
import { SYSTEM } from '#core/actor'

/**
 * reconciliation.verify — the daily check of the ledger against the bank.
 * Reads only (and records its result): running it twice is harmless. A
 * failure is logged at error level with each problem, for alerting.
 */
export default async function verifyReconciliationJob() {
  const result = await runReconciliationCheck(SYSTEM)
  if (!result.ok) {
    logger.error(
      { problems: result.problems.slice(0, 50), count: result.problems.length },
      'the ledger and the bank statements disagree (reconcile:verify)'
    )
  }
  return {
    ok: result.ok,
    problems: result.problems.length,
    open_receivables: result.openReceivables.length,
  }
}
