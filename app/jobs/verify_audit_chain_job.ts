import logger from '@adonisjs/core/services/logger'
import { runAuditChainCheck } from '#core/audit_chain'
import { SYSTEM } from '#core/actor'

/**
 * audit.verify — the daily check that every sealed audit row still matches
 * its seal, the seals still form one chain, and no row past the chain's
 * start waits unsealed. Reads only (and records its result): running it
 * twice is harmless. A failure is logged at error level with each problem.
 */
export default async function verifyAuditChainJob() {
  const result = await runAuditChainCheck(SYSTEM)
  if (!result.ok) {
    logger.error(
      { problems: result.problems.slice(0, 50), count: result.problemCount },
      'the audit log does not match its seals (audit:verify)'
    )
  }
  return {
    ok: result.ok,
    problems: result.problemCount,
    sealed: result.sealed,
    unsealed: result.unsealed,
  }
}
