import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { GATEWAY_OWNER } from '#ledger/accounts'
import { formatThb } from '#core/money'
import { sum } from '#reconciliation/verify/sql'
import type { Problem } from '#reconciliation/verify/types'

/**
 * Every posting that moves deposit_receivable (a payment credited before its
 * line, the line clearing it, the credit taken back: app/ledger/recipes.ts)
 * is a claim's: the claim's own posting (ledger_transaction_id), or, for a
 * clearing, the claim of the payment that was a receivable and took the
 * posting's line; for a reversal, the payment's claim reversed; for the
 * upgrade's opening (migration …101), the payment's upgrade claim. Read
 * from the receivable account's entries (its index), whole database only:
 * postings name no deposit account.
 */
export async function checkReceivablePostings(trx: TransactionClientContract): Promise<Problem[]> {
  const [rows] = await trx.rawQuery(
    `SELECT t.id, t.kind, t.reference_type, t.reference_id, SUM(e.amount) AS moved
       FROM ledger_accounts a
       JOIN ledger_entries e ON e.account_id = a.id
       JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner = ? AND a.code = 'deposit_receivable'
        AND NOT EXISTS (SELECT 1 FROM receipt_claims c WHERE c.ledger_transaction_id = t.id)
        AND NOT EXISTS (
          SELECT 1 FROM payment_orders o JOIN receipt_claims c ON c.payment_order_id = o.id
           WHERE t.reference_type = 'payment' AND o.platform_order_id = t.reference_id
             AND ((t.kind = 'receivable_opened' AND c.path = 'upgrade')
               OR ((c.path = 'upgrade' OR EXISTS (
                     SELECT 1 FROM ledger_entries r
                      WHERE r.transaction_id = c.ledger_transaction_id AND r.account_id = a.id))
                   AND ((t.kind = 'receivable_cleared'
                         AND t.idempotency_key = CONCAT('receivable_cleared:statement_line:', c.statement_line_id))
                     OR (t.kind = 'receivable_reversed' AND c.reversed_at IS NOT NULL)))))
      GROUP BY t.id, t.kind, t.reference_type, t.reference_id
      ORDER BY t.id`,
    [GATEWAY_OWNER]
  )
  return (rows as Array<Record<string, any>>).map((row) => ({
    kind: 'unbacked_receivable_posting' as const,
    detail:
      `ledger transaction ${row.id} (${row.kind}, ${row.reference_type} ${row.reference_id}) moves ` +
      `deposit_receivable by ${formatThb(sum(row.moved))} THB and no receipt claim accounts for it`,
  }))
}
