import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import PayoutOrder from '#payouts/models/payout_order'
import { completePayout } from '#payouts/actions/complete_payout'
import { lockPayout, payoutOrderId, payoutSnapshot } from '#payouts/payout_rules'
import { pendingRelease } from '#payouts/actions/release_rejected_payout'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { withDeadlockRetry } from '#core/db_retry'

export const recordPayoutOutcomeValidator = vine.compile(
  vine.object({
    platform_order_id: vine.any().use(payoutOrderId()),
    outcome: vine.enum(['success', 'failed'] as const),
    /** Why the bank refused or returned the transfer; kept as the order's failure_reason. */
    reason: vine.string().trim().maxLength(64).optional().requiredWhen('outcome', '=', 'failed'),
  })
)

const MESSAGES = {
  'outcome.required': 'outcome is required: success or failed',
  'outcome.enum': 'outcome must be success or failed',
  'reason.required': 'reason is required when the outcome is failed',
}

/**
 * Records the bank's final answer for a pending withdrawal or settlement by
 * hand (e.g. from a bulk-transfer report): success consumes the hold, failed
 * returns it; the merchant's callback is written. Audited with the order's
 * status before and after, in the same transaction.
 */
export async function recordPayoutOutcome(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(recordPayoutOutcomeValidator, input, MESSAGES)
  if (data.outcome === 'success' && data.reason !== undefined) {
    throw ActionError.field('reason', 'reason is only given when the outcome is failed')
  }
  return withDeadlockRetry(() =>
    db.transaction(async (trx) => {
      const order = await lockPayout(trx, data.platform_order_id)
      // queue: the bank has not been sent the transfer; final: already decided.
      if (order.status !== 'pending') {
        throw ActionError.field(
          'platform_order_id',
          `${order.platformOrderId} is ${order.status}; only a pending payout can be completed`
        )
      }
      // A release asked of a second operator is decided first (approved or rejected).
      const release = await pendingRelease(trx, order)
      if (release) {
        throw ActionError.field(
          'platform_order_id',
          `${order.platformOrderId}: approval request #${release.id} to release it (rejected by the bank), asked by ${release.requestedByActor}, waits for a second operator; approve or reject it first`
        )
      }
      const before = payoutSnapshot(order)
      await completePayout(
        order.id,
        data.outcome === 'success' ? { success: true } : { success: false, reason: data.reason! },
        // An operator's word: the transfer is an open item until its debit line arrives.
        { client: trx, actor, sentBy: 'by_hand' }
      )
      const completed = await PayoutOrder.query({ client: trx }).where('id', order.id).firstOrFail()
      const diff = changedValues(before, payoutSnapshot(completed))
      await recordAudit(trx, actor, {
        action: 'payout.complete',
        target: { type: completed.kind, id: completed.platformOrderId },
        before: diff.before,
        after: diff.after,
        reason: { comment: data.reason },
      })
      return completed
    })
  )
}
