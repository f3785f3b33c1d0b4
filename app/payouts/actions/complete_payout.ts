import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PayoutOrder from '#payouts/models/payout_order'
import {
  isFinalPayoutStatus,
  OPEN_PAYOUT_STATUSES,
  transitionPayout,
  type PayoutChange,
} from '#payouts/payout_state'
import { postLedgerTransaction } from '#ledger/ledger'
import { holdReleasedPosting } from '#ledger/recipes'
import { assertHoldTransition } from '#payouts/hold_state'
import { recordOrderEvent } from '#core/order_events'
import { SYSTEM, type Actor } from '#core/actor'
import { sweepDue } from '#core/sweep'
import { atTheBankSql, isAtTheBank } from '#payouts/at_the_bank'
import { claimPayoutReturn, linkReturnPosting } from '#payouts/payout_returns'
import { ReceiptClaimedError } from '#reconciliation/receipts'
import { inTransaction } from '#core/transaction'

/** A re-run after a lost COMMIT finds the order final (or the hold released) and changes nothing. */
const IDEMPOTENT = { idempotent: true }

export type PayoutOutcome =
  | { success: true }
  | { success: false; reason: string; status?: 'failed' | 'error' | 'rejected' | 'cancelled' }

/**
 * The bank's final answer for a payout, in one transaction (the caller's when
 * given: a statement line and the payout it settles commit together).
 * Idempotent: a final order is left as it is and false is returned.
 */
export async function completePayout(
  payoutOrderId: number,
  outcome: PayoutOutcome,
  options: {
    now?: DateTime
    client?: TransactionClientContract
    actor?: Actor
    reason?: string
    sentBy?: PayoutChange['sentBy']
  } = {}
) {
  const run = <T>(work: (trx: TransactionClientContract) => Promise<T>) =>
    options.client ? work(options.client) : inTransaction(work, IDEMPOTENT)
  return run(async (trx) => {
    const order = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (!order || isFinalPayoutStatus(order.status)) return false
    await transitionPayout(trx, order, {
      to: outcome.success ? 'success' : (outcome.status ?? 'failed'),
      actor: options.actor ?? SYSTEM,
      reason: options.reason ?? (outcome.success ? 'the bank confirmed the transfer' : null),
      failureReason: outcome.success ? undefined : outcome.reason,
      sentBy: options.sentBy,
      now: options.now,
    })
    return true
  })
}

/**
 * A statement line naming a bulk-file payout with its amount (the matcher's
 * verdict) settles it, in the caller's transaction with the payout locked: a
 * debit completes it, a credit is its return, which claims the line (its
 * money gave the merchant the hold back) before failing the payout. Returns
 * why not when another decision already took the credit's money: the payout
 * stays as it is, for an operator.
 */
export async function completePayoutByLine(
  trx: TransactionClientContract,
  line: {
    id: number
    deposit_account_id: number
    direction: 'credit' | 'debit'
    amount: number
    reference: string | null
  },
  order: PayoutOrder
): Promise<string | null> {
  const outcome: PayoutOutcome =
    line.direction === 'debit' ? { success: true } : { success: false, reason: 'returned_by_bank' }
  if (!outcome.success) {
    try {
      await claimPayoutReturn(trx, { line, payout: order, actor: SYSTEM })
    } catch (error) {
      // Only the INSERT failed; the caller's transaction goes on without this line.
      if (!(error instanceof ReceiptClaimedError)) throw error
      return `${line.reference}: ${error.message}`
    }
  }
  await completePayout(order.id, outcome, {
    client: trx,
    reason: `statement line ${line.id}`,
    // The statement itself says the money left: confirmed by this line.
    sentBy: { line: { id: line.id, depositAccountId: line.deposit_account_id } },
  })
  if (!outcome.success) await linkReturnPosting(trx, line.id, order)
  // Final now: another line naming it finds no pending payout.
  order.status = outcome.success ? 'success' : 'failed'
  return null
}

/**
 * The hold timeout: an order still open after the hold period gives its
 * amount + fee back to balance and stays open, except a bulk-file payout
 * whose file is at the bank (isAtTheBank). Idempotent.
 */
export async function releasePayoutHold(payoutOrderId: number, now = DateTime.utc()) {
  return inTransaction(async (trx) => {
    const order = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (!order || isFinalPayoutStatus(order.status) || order.holdState !== 'held') return false
    if (order.holdExpiresAt > now) return false
    if (isAtTheBank(order)) return false
    assertHoldTransition(order.holdState, 'released')
    await postLedgerTransaction(trx, holdReleasedPosting(order))
    order.holdState = 'released'
    await order.useTransaction(trx).save()
    await recordOrderEvent(trx, {
      orderType: order.kind,
      orderId: order.id,
      from: order.status,
      to: order.status,
      actor: SYSTEM,
      reason: 'hold released: no final answer within the hold period',
    })
    return true
  }, IDEMPOTENT)
}

/**
 * Releases every overdue hold, oldest first (payout.release-overdue-holds,
 * every EXPIRY_SWEEP_INTERVAL_MS: the release path since no job is queued
 * per withdrawal for it; app/core/sweep.ts). Returns how many it released.
 */
export async function releaseOverdueHolds(now = DateTime.utc(), batch = 500) {
  return sweepDue({
    due: (skip, size) =>
      PayoutOrder.query()
        .whereIn('status', OPEN_PAYOUT_STATUSES)
        .where('hold_state', 'held')
        .where('hold_expires_at', '<=', now.toJSDate())
        // Files at the bank keep their holds.
        .whereNot(atTheBankSql)
        .if(skip.length > 0, (query) => query.whereNotIn('id', skip))
        .orderBy('hold_expires_at')
        .limit(size)
        .select('id', 'platform_order_id'),
    apply: (id) => releasePayoutHold(id, now),
    failure: 'payout hold not released',
    summary: (failed, done) => `${failed} overdue holds could not be released (${done} were)`,
    batch,
  })
}
