import { DateTime } from 'luxon'
import PayoutOrder from '#payouts/models/payout_order'
import { compareAndSetPayoutStatus, transitionPayout } from '#payouts/payout_state'
import { SYSTEM, type Actor } from '#core/actor'
import { PAYOUT_CONNECTORS, payoutConnector } from '#payouts/connectors/registry'
import { completePayout } from '#payouts/actions/complete_payout'
import queueConfig from '#config/queue'
import { forgetPastWithdrawals } from '#payouts/duplicate_withdrawals'
import { inTransaction } from '#core/transaction'

/**
 * new → queue → (connector) → pending. Each step is its own compare-and-set
 * batch (one round trip) that changes the order only from the state it
 * expects, so running this twice (a retried job, a second worker) moves the
 * order once. The connector call sits between them: connectors are
 * idempotent per order, and an order found in queue is submitted again (its
 * worker died after the first step). `actor`: who the order's timeline names
 * (the worker, or an operator retrying a dispatch).
 */
export async function dispatchPayout(payoutOrderId: number, actor: Actor = SYSTEM) {
  const { order } = await compareAndSetPayoutStatus(payoutOrderId, 'new', {
    to: 'queue',
    actor,
    reason: 'dispatched',
  })
  if (!order || order.status !== 'queue') return 'skipped'

  const connector = payoutConnector(order.connector)
  if (!connector)
    throw new Error(`Unknown payout connector ${order.connector} on ${order.platformOrderId}`)
  const result = await connector.submit(order)
  if (result.state === 'queued') return 'queued'

  // The bank's answer may already have been recorded (see collectBankAnswer): then nothing moves.
  const { moved } = await compareAndSetPayoutStatus(payoutOrderId, 'queue', {
    to: 'pending',
    actor,
    reason: `${connector.name}: transfer accepted`,
    connectorReference: result.reference,
  })
  return moved ? 'pending' : 'skipped'
}

/**
 * Asks the order's bank for its final answer and records it, once. The answer
 * can arrive before the dispatch wrote `pending` (its worker died right after
 * the bank accepted the transfer): the answer proves the bank has the
 * transfer, so the order goes queue → pending → final in one transaction.
 * Returns whether this call completed the order.
 */
export async function collectBankAnswer(payoutOrderId: number) {
  const order = await PayoutOrder.find(payoutOrderId)
  if (!order || !['queue', 'pending'].includes(order.status)) return false
  // Asked outside the transaction: a bank call never holds a row lock.
  const answer = await payoutConnector(order.connector)?.inquire(order)
  if (!answer) return false

  return inTransaction(async (trx) => {
    const row = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (!row || !['queue', 'pending'].includes(row.status)) return false
    if (row.status === 'queue') {
      await transitionPayout(trx, row, {
        to: 'pending',
        actor: SYSTEM,
        reason: `${row.connector}: the bank answered before the dispatch recorded its acceptance`,
        connectorReference: answer.reference,
      })
    }
    return completePayout(payoutOrderId, answer.outcome, { client: trx })
  })
}

/**
 * Safety net for lost jobs and dead workers, run every sweep interval. An
 * order untouched for a whole interval is stale:
 * - new, or queue on a connector that submits one by one: dispatched again
 *   (a dispatch job lost, or a worker killed between two steps);
 * - pending: its bank is asked for the answer (the answer job was lost).
 * Overdue holds are released by their own sweep (releaseOverdueHolds).
 */
export async function sweepPayouts(now = DateTime.utc()) {
  const staleBefore = now.minus({ milliseconds: queueConfig.sweepIntervalMs }).toJSDate()
  const direct = PAYOUT_CONNECTORS.filter((connector) => !connector.batched).map((c) => c.name)

  const stuck = await PayoutOrder.query()
    .where('updated_at', '<', staleBefore)
    .where((query) =>
      query
        .where('status', 'new')
        .orWhere((q) => q.where('status', 'queue').whereIn('connector', direct))
    )
    .limit(500)
    .select('id')
  for (const { id } of stuck) await dispatchPayout(id)

  const waiting = await PayoutOrder.query()
    .where('status', 'pending')
    .where('updated_at', '<', staleBefore)
    .limit(500)
    .select('id')
  let answered = 0
  for (const { id } of waiting) if (await collectBankAnswer(id)) answered++

  await forgetPastWithdrawals(now)
  return { dispatched: stuck.length, answered }
}
