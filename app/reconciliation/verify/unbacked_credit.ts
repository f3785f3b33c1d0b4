import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { DEPOSIT_CREDIT_KINDS } from '#ledger/recipes'
import type { Problem } from '#reconciliation/verify/types'

/**
 * Every merchant credit from a deposit (payment paid, late payment, line
 * credited) is backed by exactly one claim: none is unbacked_credit, more
 * is credit_claimed_twice. Postings name no account: unscoped only.
 */
export async function checkDepositCredits(trx: TransactionClientContract): Promise<Problem[]> {
  const [credits] = await trx.rawQuery(
    `SELECT t.id, t.kind, t.reference_type, t.reference_id, COUNT(c.id) AS claims
       FROM ledger_transactions t
       LEFT JOIN receipt_claims c ON c.ledger_transaction_id = t.id
      WHERE t.kind IN (${DEPOSIT_CREDIT_KINDS.map(() => '?').join(', ')})
      GROUP BY t.id, t.kind, t.reference_type, t.reference_id
     HAVING COUNT(c.id) <> 1`,
    [...DEPOSIT_CREDIT_KINDS]
  )
  return (credits as Array<Record<string, any>>).map((row): Problem => {
    const what = `ledger transaction ${row.id} (${row.kind}, ${row.reference_type} ${row.reference_id})`
    return Number(row.claims) === 0
      ? {
          kind: 'unbacked_credit',
          detail: `${what} credits a merchant without a bank receipt or receivable`,
        }
      : { kind: 'credit_claimed_twice', detail: `${what} is backed by ${row.claims} claims` }
  })
}
