import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { BANK_REFERENCE } from '#reconciliation/verify/sql'
import type { CheckScope, Problem } from '#reconciliation/verify/types'

/**
 * A claim on a line names that line's transfer: a slip of another transfer
 * approved on it (before claims carried their line's transfer) took a line
 * that was not the slip's money, and the slip's transfer may be credited again.
 */
export async function checkClaimTransfers(
  trx: TransactionClientContract,
  scope: CheckScope | undefined
): Promise<Problem[]> {
  const [mismatched] = await trx.rawQuery(
    `SELECT c.id, c.path, c.trans_ref, c.deposit_account_id, l.id AS line_id, l.trans_ref AS line_ref
       FROM receipt_claims c
       JOIN statement_lines l ON l.id = c.statement_line_id AND ${BANK_REFERENCE('l')}
      WHERE c.trans_ref IS NOT NULL AND c.reversed_at IS NULL AND NOT (c.trans_ref <=> l.trans_ref)
        ${scope ? 'AND c.deposit_account_id = ?' : ''}
      ORDER BY c.id`,
    scope ? [scope.depositAccountId] : []
  )
  return (mismatched as Array<Record<string, any>>).map((row) => ({
    kind: 'claim_transfer_mismatch' as const,
    detail:
      `claim ${row.id} (${row.path}) names the transfer ${row.trans_ref}, but its statement line ` +
      `#${row.line_id} is the bank's transfer ${row.line_ref}: check which transfer paid it`,
    depositAccountId: Number(row.deposit_account_id),
  }))
}
