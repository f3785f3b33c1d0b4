import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type PayoutOrder from '#payouts/models/payout_order'
import { returnMovesMoney } from '#payouts/hold_state'
import { insertClaim } from '#reconciliation/receipts'
import type { Actor } from '#core/actor'

/**
 * A payout's transfer the bank sent back (docs/reconciliation.md, "Payout
 * lines"): the credit line that brings back the payout's amount is claimed
 * by the return (path payout_return) in the transaction that fails the
 * payout and gives the merchant its hold back, like any receipt a decision
 * takes. The line's unique key then refuses every other claim on it (a
 * merchant credit, an attach, a slip), naming the return.
 */
export interface PayoutReturn {
  line: { id: number; deposit_account_id: number; amount: number }
  /** The payout as it is before its return (locked by the caller). */
  payout: Pick<PayoutOrder, 'merchantId' | 'amount' | 'holdState'>
  actor: Actor
  approvalRequestId?: number | null
}

/**
 * What the return gives the merchant back out of the line's money: the
 * payout's amount while its hold is still held (its fee, never charged,
 * goes back with the hold from the merchant's own frozen balance, not from
 * the line); nothing when the hold was released before (the merchant had
 * the money back then).
 */
export function returnedToMerchant(payout: PayoutReturn['payout']) {
  return returnMovesMoney(payout.holdState) ? payout.amount : 0
}

/**
 * Writes the return's claim on its line, before the payout is failed in the
 * same transaction: a line another decision already took fails here
 * (ReceiptClaimedError naming that decision) and the payout is left as it is.
 */
export async function claimPayoutReturn(trx: TransactionClientContract, returned: PayoutReturn) {
  await insertClaim(trx, {
    depositAccountId: returned.line.deposit_account_id,
    statementLineId: returned.line.id,
    path: 'payout_return',
    actor: returned.actor,
    merchantId: returned.payout.merchantId,
    expectedAmount: returned.line.amount,
    credited: returnedToMerchant(returned.payout),
    fee: 0,
    approvalRequestId: returned.approvalRequestId ?? null,
  })
}

/**
 * Ties the return's claim to the posting that gave the hold back (none when
 * the hold had been released before), once the payout has failed.
 */
export async function linkReturnPosting(
  trx: TransactionClientContract,
  lineId: number,
  payout: Pick<PayoutOrder, 'kind' | 'platformOrderId'>
) {
  await trx.rawQuery(
    `UPDATE receipt_claims c
       JOIN ledger_transactions t
         ON t.reference_type = ? AND t.reference_id = ? AND t.kind = ?
        SET c.ledger_transaction_id = t.id
      WHERE c.statement_line_id = ? AND c.path = 'payout_return'`,
    [payout.kind, payout.platformOrderId, `${payout.kind}_hold_return`, lineId]
  )
}
