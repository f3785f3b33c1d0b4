import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { claimScope } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * No receipt is claimed twice: a statement line more than one claim takes.
 * (A receivable naming a line another claim took is receivable_line_waiting.ts.)
 */
export async function checkReceiptsClaimedTwice(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const claims = claimScope(scope)
  const [twice] = await trx.rawQuery(
    `SELECT c.statement_line_id, COUNT(*) AS claims, GROUP_CONCAT(c.id ORDER BY c.id) AS ids
       FROM receipt_claims c WHERE c.statement_line_id IS NOT NULL${claims.where}
      GROUP BY c.statement_line_id HAVING COUNT(*) > 1`,
    claims.bindings
  )
  return (twice as Array<Record<string, any>>).map((row) => ({
    kind: 'receipt_claimed_twice' as const,
    detail: `statement line #${row.statement_line_id} is claimed ${row.claims} times (claims ${row.ids})`,
    depositAccountId: scope?.depositAccountId,
  }))
}
