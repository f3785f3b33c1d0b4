import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Merchant from '#merchants/models/merchant'
import { flagNegativeBalance, postLedgerTransaction } from '#ledger/ledger'
import { holdConsumedPosting, holdReturnedPosting } from '#ledger/recipes'
import { consumedFrom, returnMovesMoney } from '#payouts/hold_state'
import { recordPayoutSent } from '#payouts/payout_confirmations'
import { writePayoutCallback } from '#callbacks/outbox'
import { changedPayoutEventStatement, recordOrderEvent } from '#core/order_events'
import { batchTransaction, statement, COMMIT } from '#core/sql_batch'
import PayoutOrder from '#payouts/models/payout_order'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'
import { PAYOUT_STATUSES, type PayoutStatus } from '#payouts/payout_status'

export { PAYOUT_STATUSES, type PayoutStatus } from '#payouts/payout_status'

/**
 * Withdraw and settlement state machine (spec: Withdraw and settlement order
 * status) over the statuses of payout_status.ts. Internal states are kept
 * for operations; the API shows three.
 */
export const PAYOUT_TRANSITIONS: Record<PayoutStatus, readonly PayoutStatus[]> = {
  new: ['queue', 'cancelled', 'rejected'],
  queue: ['pending', 'failed', 'error', 'cancelled'],
  pending: ['success', 'failed', 'error'],
  success: [],
  failed: [],
  error: [],
  cancelled: [],
  rejected: [],
}

export const PUBLIC_PAYOUT_STATUS: Record<PayoutStatus, 'open' | 'success' | 'failed'> = {
  new: 'open',
  queue: 'open',
  pending: 'open',
  success: 'success',
  failed: 'failed',
  error: 'failed',
  cancelled: 'failed',
  rejected: 'failed',
}

export function isFinalPayoutStatus(status: PayoutStatus) {
  return PAYOUT_TRANSITIONS[status].length === 0
}

/** The statuses a payout can still leave (its hold may still be held). */
export const OPEN_PAYOUT_STATUSES = PAYOUT_STATUSES.filter((status) => !isFinalPayoutStatus(status))

export class IllegalPayoutTransitionError extends Error {
  constructor(from: PayoutStatus, to: PayoutStatus) {
    super(`A payout order cannot go from ${from} to ${to}`)
  }
}

export function assertPayoutTransition(from: PayoutStatus, to: PayoutStatus) {
  if (!PAYOUT_TRANSITIONS[from].includes(to)) throw new IllegalPayoutTransitionError(from, to)
}

export interface PayoutChange {
  to: PayoutStatus
  actor: Actor
  /** Why, in words: shown on the order's timeline. */
  reason?: string | null
  /** → pending: the connector's reference for the transfer. */
  connectorReference?: string
  /** → a failed status: the machine-readable cause (account_closed, ...). */
  failureReason?: string
  /**
   * → success: who says the money left the bank: the debit line that
   * confirms it (a bulk-file payout's statement), the bank's API (default),
   * or an operator. Without a line the transfer is an open item until its
   * debit line arrives.
   */
  sentBy?: 'connector' | 'by_hand' | { line: { id: number; depositAccountId: number } }
  now?: DateTime
}

/**
 * The one way a withdrawal or settlement changes status, inside the caller's
 * transaction with the order row locked: checks the state table, applies what
 * the new status means, saves the order and appends its event.
 *
 * - success: the hold is consumed (amount + fee leave frozen; after the hold
 *   timeout they leave balance instead, even below zero: the bank has paid);
 *   SUCCESS callback; the transfer recorded for its debit line to confirm.
 * - failed, error, cancelled, rejected: a hold still held returns to balance
 *   (after the timeout it already has); FAIL callback.
 */
export async function transitionPayout(
  trx: TransactionClientContract,
  order: PayoutOrder,
  change: PayoutChange
) {
  const from = order.status
  assertPayoutTransition(from, change.to)
  const now = change.now ?? DateTime.utc()

  if (change.connectorReference !== undefined) order.connectorReference = change.connectorReference
  let postHold: (() => Promise<void>) | undefined
  if (change.to === 'success') {
    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    postHold = consumeHold(trx, order, merchant)
    order.doneAt = now
    await writePayoutCallback(trx, order, merchant, 'SUCCESS', now.toJSDate())
    const sentBy = change.sentBy ?? 'connector'
    await recordPayoutSent(trx, {
      payoutOrderId: order.id,
      amount: order.amount,
      path: typeof sentBy === 'string' ? sentBy : 'bank_line',
      actor: change.actor,
      line: typeof sentBy === 'string' ? null : sentBy.line,
    })
  } else if (isFinalPayoutStatus(change.to)) {
    const merchant = await Merchant.findOrFail(order.merchantId, { client: trx })
    postHold = returnHold(trx, order)
    order.failureReason = change.failureReason ?? change.to
    order.doneAt = now
    await writePayoutCallback(trx, order, merchant, 'FAIL', now.toJSDate())
  }

  order.status = change.to
  await order.useTransaction(trx).save()
  await recordOrderEvent(trx, {
    orderType: order.kind,
    orderId: order.id,
    from,
    to: change.to,
    actor: change.actor,
    reason: change.reason ?? change.failureReason,
  })
  // Last before the caller's commit: the posting locks the merchant's balance
  // row, which every payout of the merchant needs, until then.
  await postHold?.()
}

/**
 * A transition that moves no money (→ queue, → pending) as one
 * compare-and-set batch in its own transaction, without reading the row
 * first: the order changes, and its event is appended, only if it is still
 * in `from` (a transition the table allows). One round trip instead of five
 * (BEGIN, lock, update, event, COMMIT): the worker dispatches every payout
 * through two of them. Returns the order as it is after the batch (null if
 * there is none) and whether this call moved it.
 */
export async function compareAndSetPayoutStatus(
  payoutOrderId: number,
  from: PayoutStatus,
  change: PayoutChange
) {
  // A final status moves money and writes a callback (transitionPayout); the others change only the status.
  if (isFinalPayoutStatus(change.to)) {
    throw new Error(`A payout order goes to ${change.to} through transitionPayout`)
  }
  assertPayoutTransition(from, change.to)
  const now = (change.now ?? DateTime.utc()).toJSDate()
  const set = ['status = ?', 'updated_at = ?']
  const values: unknown[] = [change.to, now]
  if (change.connectorReference !== undefined) {
    set.push('connector_reference = ?')
    values.push(change.connectorReference)
  }
  const [updated, , rows] = await withDeadlockRetry(() =>
    batchTransaction((trx) =>
      trx.run([
        statement(`UPDATE payout_orders SET ${set.join(', ')} WHERE id = ? AND status = ?`, [
          ...values,
          payoutOrderId,
          from,
        ]),
        changedPayoutEventStatement({
          orderId: payoutOrderId,
          from,
          to: change.to,
          actor: change.actor,
          reason: change.reason,
        }),
        statement('SELECT * FROM payout_orders WHERE id = ?', [payoutOrderId]),
        COMMIT,
      ])
    )
  )
  return {
    order: rows[0] ? PayoutOrder.$createFromAdapterResult(rows[0]) : null,
    moved: updated.affectedRows === 1,
  }
}

/** Sets the hold consumed and returns its posting, to be written last. */
function consumeHold(trx: TransactionClientContract, order: PayoutOrder, merchant: Merchant) {
  const source = consumedFrom(order.holdState)
  const wasReleased = order.holdState === 'released'
  order.holdState = 'consumed'
  return async () => {
    await postLedgerTransaction(trx, holdConsumedPosting(order, source))
    if (wasReleased) await flagNegativeBalance(trx, merchant.id)
  }
}

/** Sets the hold returned and returns its posting (none unless it was held), to be written last. */
function returnHold(trx: TransactionClientContract, order: PayoutOrder) {
  const movesMoney = returnMovesMoney(order.holdState)
  order.holdState = 'returned'
  return async () => {
    if (movesMoney) await postLedgerTransaction(trx, holdReturnedPosting(order))
  }
}
