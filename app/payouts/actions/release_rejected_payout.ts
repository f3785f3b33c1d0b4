import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import PayoutOrder from '#payouts/models/payout_order'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { livePendingRequest, openApprovalRequest } from '#approvals/approval_requests'
import { completePayout } from '#payouts/actions/complete_payout'
import { BULK_FILE, isAtTheBank } from '#payouts/at_the_bank'
import { returnMovesMoney } from '#payouts/hold_state'
import { lockPayout, payoutOrderId, payoutSnapshot } from '#payouts/payout_rules'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/**
 * Releasing a bulk-file payout the bank rejected (docs/decisions.md, "A payout
 * the bank rejected is released by two operators"). Its file is at the bank,
 * so its hold stays until a statement line settles it; when an operator
 * learns from the bank that it refused the transfer (no debit will ever
 * come), the payout fails and the merchant's hold goes back to its balance.
 * Nothing on the statement proves it, so one person's word never does it:
 * the request always waits for a second operator, and the requester cannot
 * approve it.
 */

export const RELEASE_REJECTED_ACTION = 'payout.release_rejected'
export const RELEASE_REJECTED_KIND = 'payout_release'
/** The order's failure_reason, as the callback and the API's status read it. */
export const REJECTED_BY_BANK = 'rejected_by_bank'

const schema = vine.object({
  platform_order_id: vine.any().use(payoutOrderId()),
  /** How the bank said it: kept with the request, on the order's timeline and in the audit log. */
  reason: vine.string().trim().minLength(1).maxLength(1000),
})

export const releaseRejectedPayoutValidator = vine.compile(schema)
export type ReleaseRejectedData = Infer<typeof schema>

const REASON_REQUIRED =
  'reason is required: say how the bank told you it rejected the transfer (its report, a call, a case number)'

export const RELEASE_REJECTED_MESSAGES = {
  'platform_order_id.required': 'platform_order_id is required: the withdrawal or settlement',
  'reason.required': REASON_REQUIRED,
  'reason.minLength': REASON_REQUIRED,
}

/**
 * Why the payout cannot be released as rejected by the bank now, or null:
 * only a bulk-file payout whose file is at the bank, with no debit line
 * naming it waiting on a statement (the bank may have sent it after all).
 * The page asks it (without locks) to offer the button; the action asks it
 * again under the payout's lock, when the request is opened and when it is
 * approved.
 */
export async function releaseRefusal(client: QueryClientContract, order: PayoutOrder) {
  const id = order.platformOrderId
  if (order.connector !== BULK_FILE) {
    return `${id} is not a bulk-file payout (route ${order.connector}): its bank answers through the connector, nothing waits for a file`
  }
  if (!isAtTheBank(order)) {
    if (order.status === 'new' || order.status === 'queue') {
      return `${id} is ${order.status}: its bulk file has not been handed to the bank, nothing is at the bank to release`
    }
    if (order.status === 'success') {
      return `${id} is success: the bank made the transfer (its debit line or the bank's answer came), nothing to release`
    }
    const why = order.failureReason ? ` (${order.failureReason})` : ''
    return `${id} is already ${order.status}${why}: its hold went back when it ended, nothing to release`
  }
  const debit = await waitingDebitLine(client, id)
  if (debit) {
    return (
      `statement line #${debit.id}, a debit of ${formatThb(Number(debit.amount))} THB naming ${id} ` +
      `(${formatGatewayDateTime(new Date(debit.line_at))}), is on the statement: the bank may have sent it; ` +
      'decide that line first'
    )
  }
  return null
}

/**
 * A debit line naming the payout that no rule settled (another amount) or
 * that is not judged yet: the bank's word on the statement comes before an
 * operator's. Read through the lines' status index: unmatched and new lines
 * are the few waiting for someone.
 */
function waitingDebitLine(client: QueryClientContract, platformOrderId: string) {
  return client
    .from('statement_lines')
    .whereIn('status', ['new', 'unmatched'])
    .where('direction', 'debit')
    .where('reference', platformOrderId)
    .orderBy('id')
    .select('id', 'amount', 'line_at')
    .first()
}

export type ReleaseRejectedPrepared = Awaited<ReturnType<typeof prepareRelease>>

/** Locks the payout and checks it is still at the bank, with no debit line waiting. */
export async function prepareRelease(trx: TransactionClientContract, data: ReleaseRejectedData) {
  const order = await lockPayout(trx, data.platform_order_id)
  const refused = await releaseRefusal(trx, order)
  if (refused) throw ActionError.field('platform_order_id', refused)
  return {
    order,
    target: {
      type: order.kind,
      id: order.platformOrderId,
      // What goes back to the merchant's balance: the hold, amount + fee.
      amount: returnMovesMoney(order.holdState) ? order.total : 0,
      reviewedBy: null,
    },
  }
}

/**
 * An operator asks for the release: the payout is checked under its lock and
 * the approval request opened (one per payout while pending), audited with
 * the reason. Nothing moves until a second operator approves.
 */
export async function requestPayoutRelease(
  input: Record<string, unknown>,
  actor: Actor
): Promise<{ order: PayoutOrder; request: ApprovalRequest }> {
  const data = await validateInput(releaseRejectedPayoutValidator, input, RELEASE_REJECTED_MESSAGES)
  return inTransaction(async (trx) => {
    const prepared = await prepareRelease(trx, data)
    const request = await openApprovalRequest(trx, {
      action: RELEASE_REJECTED_ACTION,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      reason: { code: REJECTED_BY_BANK, comment: data.reason },
    })
    return { order: prepared.order, request }
  })
}

/**
 * On approval: the payout fails (rejected_by_bank) through the state table,
 * its hold returns to the merchant's balance (once: the hold's own state),
 * with its event and the merchant's FAIL callback, and the release is
 * audited with the requester and the approver.
 */
export async function runRelease(
  trx: TransactionClientContract,
  prepared: ReleaseRejectedPrepared,
  data: ReleaseRejectedData,
  context: RunContext
) {
  const { order } = prepared
  const { actor, request } = context
  const before = payoutSnapshot(order)
  const returned = returnMovesMoney(order.holdState) ? order.total : 0
  const asked = request
    ? ` (approval request #${request.id}, asked by ${request.requestedByActor})`
    : ''
  await completePayout(
    order.id,
    { success: false, reason: REJECTED_BY_BANK },
    { client: trx, actor, reason: `the bank rejected it: ${data.reason}${asked}` }
  )
  const released = await PayoutOrder.query({ client: trx }).where('id', order.id).firstOrFail()
  const diff = changedValues(before, payoutSnapshot(released))
  await recordAudit(trx, actor, {
    action: 'payout.release_rejected',
    target: { type: released.kind, id: released.platformOrderId },
    before: diff.before,
    after: diff.after,
    reason: { code: REJECTED_BY_BANK, comment: data.reason },
    details: {
      approval_request_id: request?.id ?? null,
      requested_by: request?.requestedByActor ?? null,
      batch_id: released.batchId,
      returned_to_balance: returned,
    },
  })
  return {
    platform_order_id: released.platformOrderId,
    status: released.status,
    hold_state: released.holdState,
    returned_to_balance: returned,
  }
}

/**
 * The release waiting for a second operator on this payout, if any, locked
 * (one past its expiry is closed as expired here and no longer counts).
 */
export async function pendingRelease(trx: TransactionClientContract, order: PayoutOrder) {
  return livePendingRequest(trx, RELEASE_REJECTED_KIND, {
    type: order.kind,
    id: order.platformOrderId,
  })
}

/*
 * Four eyes always, whatever the amount: no threshold, no direct form. An
 * operator may approve (the role that decides payments and lines); the
 * requester may only withdraw it.
 */
registerApprovableAction<ReleaseRejectedData, ReleaseRejectedPrepared>({
  name: RELEASE_REJECTED_ACTION,
  kind: RELEASE_REJECTED_KIND,
  approverRole: 'operator',
  describe: (data) =>
    `release payout ${data.platform_order_id}, rejected by the bank: it fails and its hold goes back to the merchant's balance`,
  validate: (input) =>
    validateInput(releaseRejectedPayoutValidator, input, RELEASE_REJECTED_MESSAGES),
  prepare: (trx, data) => prepareRelease(trx, data),
  run: (trx, prepared, data, context) => runRelease(trx, prepared, data, context),
})
