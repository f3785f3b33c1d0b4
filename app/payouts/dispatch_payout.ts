import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#models/payout_order'
import { assertPayoutTransition } from '#payouts/payout_state'
import { payoutConnector } from '#payouts/connectors/registry'
import { completePayout, releasePayoutHold } from '#payouts/complete_payout'
import { sandboxOutcome } from '#payouts/connectors/sandbox_bank'

/**
 * new → queue → (connector) → pending. Each step is its own short transaction
 * and checks the state it expects, so running this twice (a retried job, a
 * second worker) moves the order once. The connector call sits between them:
 * connectors are idempotent per order.
 */
export async function dispatchPayout(payoutOrderId: number) {
  const order = await db.transaction(async (trx) => {
    const row = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .first()
    if (row?.status === 'new') {
      assertPayoutTransition('new', 'queue')
      row.status = 'queue'
      await row.useTransaction(trx).save()
    }
    return row
  })
  if (!order || order.status !== 'queue') return 'skipped'

  const connector = payoutConnector(order.connector)
  if (!connector)
    throw new Error(`Unknown payout connector ${order.connector} on ${order.platformOrderId}`)
  const result = await connector.submit(order)
  if (result.state === 'queued') return 'queued'

  return db.transaction(async (trx) => {
    const row = await PayoutOrder.query({ client: trx })
      .where('id', payoutOrderId)
      .forUpdate()
      .firstOrFail()
    if (row.status !== 'queue') return 'skipped'
    assertPayoutTransition('queue', 'pending')
    row.status = 'pending'
    row.connectorReference = result.reference
    await row.useTransaction(trx).save()
    return 'pending'
  })
}

/** What the sandbox bank answers for an order it accepted. */
export async function applySandboxBankOutcome(payoutOrderId: number) {
  const order = await PayoutOrder.find(payoutOrderId)
  if (!order || order.status !== 'pending') return false
  const decided = sandboxOutcome(order.accountNo)
  if (decided.outcome === 'silent') return false
  return completePayout(
    payoutOrderId,
    decided.outcome === 'success' ? { success: true } : { success: false, reason: decided.reason! }
  )
}

/** Safety net for lost jobs: dispatch orders stuck in new, release overdue holds. */
export async function sweepPayouts(now = DateTime.utc()) {
  const stuck = await PayoutOrder.query()
    .where('status', 'new')
    .where('created_at', '<', now.minus({ minutes: 1 }).toJSDate())
    .limit(500)
    .select('id')
  for (const { id } of stuck) await dispatchPayout(id)

  const overdue = await PayoutOrder.query()
    .whereIn('status', ['new', 'queue', 'pending'])
    .where('hold_state', 'held')
    .where('hold_expires_at', '<=', now.toJSDate())
    .limit(500)
    .select('id')
  let released = 0
  for (const { id } of overdue) if (await releasePayoutHold(id, now)) released++
  return { dispatched: stuck.length, released }
}
