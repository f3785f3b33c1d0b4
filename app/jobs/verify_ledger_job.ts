import logger from '@adonisjs/core/services/logger'
import { runLedgerCheck } from '#ledger/verify'
import { SYSTEM } from '#core/actor'

/**
 * ledger.verify — the daily check that every ledger transaction balances and
 * every merchant balance equals its entries. Reads only (and records its
 * result): running it twice is harmless. A drift is logged at error level.
 */
export default async function verifyLedgerJob() {
  const result = await runLedgerCheck(SYSTEM)
  if (result.drifts.length > 0) {
    logger.error(
      { drifts: result.drifts.slice(0, 50), count: result.drifts.length },
      'the ledger does not balance (ledger:verify)'
    )
  }
  return { ok: result.drifts.length === 0, drifts: result.drifts.length }
}
