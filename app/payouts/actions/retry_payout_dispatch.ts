import vine from '@vinejs/vine'
import logger from '@adonisjs/core/services/logger'
import PayoutOrder from '#payouts/models/payout_order'
import { PAYOUT_TRANSITIONS, type PayoutStatus } from '#payouts/payout_state'
import { payoutConnector } from '#payouts/connectors/registry'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'
import { lockPayout, payoutOrderId, payoutSnapshot } from '#payouts/payout_rules'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const retryPayoutDispatchValidator = vine.compile(
  vine.object({
    platform_order_id: vine.any().use(payoutOrderId()),
    comment: vine.string().trim().maxLength(255).optional(),
  })
)

/** The step dispatch takes from each status it moves an order on from. */
const DISPATCH_STEP: Partial<Record<PayoutStatus, PayoutStatus>> = {
  new: 'queue',
  queue: 'pending',
}

/**
 * Why dispatch cannot be retried for this order, or null when it can: the
 * state table must allow dispatch's next step (new → queue, queue → pending),
 * and an order in queue must belong to a connector that submits one by one (a
 * bulk-file order waits there for its bank's next file).
 */
export function retryDispatchRefusal(
  order: Pick<PayoutOrder, 'platformOrderId' | 'status' | 'connector'>
) {
  const step = DISPATCH_STEP[order.status]
  if (!step || !PAYOUT_TRANSITIONS[order.status].includes(step)) {
    return order.status === 'pending'
      ? `${order.platformOrderId} is pending: the bank has the transfer; record the bank's answer instead`
      : `${order.platformOrderId} is ${order.status}: a final status, which no dispatch leaves`
  }
  const connector = payoutConnector(order.connector)
  if (!connector) return `${order.platformOrderId}: no payout connector named ${order.connector}`
  if (order.status === 'queue' && connector.batched) {
    return `${order.platformOrderId} is paid by bulk file: it waits in queue for its bank's next bulk payout file`
  }
  return null
}

/**
 * An operator runs a withdrawal's or settlement's dispatch again now instead
 * of waiting for the payout sweep (a dispatch that failed: the connector was
 * unreachable, the job was lost). The guard and the audit row of the request
 * commit first, with the order locked; the dispatch itself then runs as the
 * worker runs it (its own short transactions, the connector called without a
 * row lock), with the operator on the order's timeline. Dispatch is
 * re-entrant and connectors are idempotent per order, so a double click or a
 * worker dispatching at the same time moves the order once.
 */
export async function retryPayoutDispatch(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(retryPayoutDispatchValidator, input)
  const before = await inTransaction(async (trx) => {
    const order = await lockPayout(trx, data.platform_order_id)
    const refusal = retryDispatchRefusal(order)
    if (refusal) throw ActionError.field('platform_order_id', refusal)
    const snapshot = payoutSnapshot(order)
    await recordAudit(trx, actor, {
      action: 'payout.dispatch_retry',
      target: { type: order.kind, id: order.platformOrderId },
      before: snapshot,
      reason: { comment: data.comment },
      details: { connector: order.connector },
    })
    return order
  })

  let result: Awaited<ReturnType<typeof dispatchPayout>>
  try {
    result = await dispatchPayout(before.id, actor)
  } catch (error) {
    logger.warn(
      { err: error, platform_order_id: before.platformOrderId },
      'payout dispatch retried by an operator failed'
    )
    const order = await PayoutOrder.findOrFail(before.id)
    throw ActionError.general(
      `The dispatch of ${order.platformOrderId} failed again (${(error as Error).message}); it stays ${order.status} and the payout sweep tries again.`
    )
  }
  const order = await PayoutOrder.findOrFail(before.id)
  return { order, result, from: before.status }
}
