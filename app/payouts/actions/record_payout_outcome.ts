import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import PayoutOrder from '#payouts/models/payout_order'
import type ApprovalRequest from '#approvals/models/approval_request'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { completePayout } from '#payouts/actions/complete_payout'
import { lockPayout, payoutOrderId, payoutSnapshot } from '#payouts/payout_rules'
import { returnMovesMoney } from '#payouts/hold_state'
import { RELEASE_REJECTED_KIND, pendingRelease } from '#payouts/actions/release_rejected_payout'
import { changedValues, recordAudit } from '#core/audit'
import { ActionError, assertConfirmed, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { formatThb } from '#core/money'
import { inTransaction } from '#core/transaction'

/** A success has no reason: only a failure says why. */
const onlyWhenFailed = vine.createRule((_value, _options, field) => {
  if ((field.parent as { outcome?: unknown }).outcome !== 'success') return
  field.report('reason is only given when the outcome is failed', 'only_when_failed', field)
})

const fields = {
  platform_order_id: vine.any().use(payoutOrderId()),
  outcome: vine.enum(['success', 'failed'] as const),
  /** Why the bank refused or returned the transfer; kept as the order's failure_reason. */
  reason: vine
    .string()
    .trim()
    .maxLength(64)
    .optional()
    .requiredWhen('outcome', '=', 'failed')
    .use(onlyWhenFailed()),
}
const schema = vine.object(fields)
export const recordPayoutOutcomeValidator = vine.compile(schema)
type OutcomeData = Infer<typeof schema>

/** What a failure waiting for a second operator holds (its request's stored input). */
const recordFailureValidator = vine.compile(
  vine.object({ ...fields, outcome: vine.enum(['failed'] as const) })
)

const MESSAGES = {
  'outcome.required': 'outcome is required: success or failed',
  'outcome.enum': 'outcome must be success or failed',
  'reason.required': 'reason is required when the outcome is failed',
}

/** Failing a payout by an operator's word: its hold goes back to the merchant's balance. */
export const RECORD_FAILURE_ACTION = 'payout.record_failure'

/**
 * Records the bank's final answer for a pending withdrawal or settlement by
 * hand (e.g. from a bulk-transfer report). Success consumes the hold at once
 * (the money has left; its debit line settles it). Failed gives the hold
 * back to the merchant's balance on one person's word, with nothing from the
 * bank to prove it: in the back-office it opens an approval request that a
 * second operator carries out (one per payout, shared with "the bank
 * rejected it"); from the command line it applies at once as a break-glass
 * use. Returns the order and the request opened, if any.
 */
export async function recordPayoutOutcome(
  input: Record<string, unknown>,
  actor: Actor
): Promise<{ order: PayoutOrder; request: ApprovalRequest | null }> {
  const data = await validateInput(recordPayoutOutcomeValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const prepared = await prepareOutcome(trx, data)
    if (data.outcome === 'success') {
      return {
        order: await runOutcome(trx, prepared, data, { actor, request: null }),
        request: null,
      }
    }
    const outcome = await askOrApplyFromShell(trx, {
      action: RECORD_FAILURE_ACTION,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      field: 'platform_order_id',
      reason: { comment: data.reason },
      summary: `failed payout ${prepared.order.platformOrderId} (${data.reason}): its hold went back to the merchant's balance`,
      run: () => runOutcome(trx, prepared, data, { actor, request: null }),
    })
    return outcome.request
      ? { order: prepared.order, request: outcome.request }
      : { order: outcome.result, request: null }
  })
}

/**
 * The bank's answer as the back-office records it: typed from its report and
 * confirmed by the operator first; the rest is recordPayoutOutcome.
 */
export async function recordConfirmedPayoutOutcome(input: Record<string, unknown>, actor: Actor) {
  await assertConfirmed(input, "tick the box to confirm the bank's answer")
  return recordPayoutOutcome(
    { platform_order_id: input.platform_order_id, outcome: input.outcome, reason: input.reason },
    actor
  )
}

type Prepared = Awaited<ReturnType<typeof prepareOutcome>>

/** Locks the payout; only a pending one, with no release waiting, takes the bank's answer. */
async function prepareOutcome(trx: TransactionClientContract, data: OutcomeData) {
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
  if (release && data.outcome === 'success') {
    throw ActionError.field(
      'platform_order_id',
      `${order.platformOrderId}: approval request #${release.id} to release it (rejected by the bank), asked by ${release.requestedByActor}, waits for a second operator; approve or reject it first`
    )
  }
  return {
    order,
    target: {
      type: order.kind,
      id: order.platformOrderId,
      // What failing gives back to the merchant's balance: the hold, amount + fee.
      amount: returnMovesMoney(order.holdState) ? order.total : 0,
      reviewedBy: null,
    },
  }
}

async function runOutcome(
  trx: TransactionClientContract,
  prepared: Prepared,
  data: OutcomeData,
  context: RunContext
) {
  const { order } = prepared
  const before = payoutSnapshot(order)
  await completePayout(
    order.id,
    data.outcome === 'success' ? { success: true } : { success: false, reason: data.reason! },
    // An operator's word: the transfer is an open item until its debit line arrives.
    { client: trx, actor: context.actor, sentBy: 'by_hand' }
  )
  const completed = await PayoutOrder.query({ client: trx }).where('id', order.id).firstOrFail()
  const diff = changedValues(before, payoutSnapshot(completed))
  await recordAudit(trx, context.actor, {
    action: 'payout.complete',
    target: { type: completed.kind, id: completed.platformOrderId },
    before: diff.before,
    after: diff.after,
    reason: { comment: data.reason },
    details: approvalDetails(context.request),
  })
  return completed
}

/*
 * Four eyes always in the back-office, whatever the amount (the bank's word
 * is not on any statement); an operator may approve, never the requester.
 * The same kind as the release of a rejected bulk-file payout: one request
 * to give a payout's hold back waits at a time.
 */
registerApprovableAction<OutcomeData, Prepared>({
  name: RECORD_FAILURE_ACTION,
  kind: RELEASE_REJECTED_KIND,
  approverRole: 'operator',
  describe: (data) =>
    `record payout ${data.platform_order_id} as failed by the bank (${data.reason}): its hold goes back to the merchant's balance`,
  validate: (input) =>
    validateInput(recordFailureValidator, input, {
      ...MESSAGES,
      'outcome.enum': 'only a failure waits',
    }),
  prepare: (trx, data) => prepareOutcome(trx, data),
  change: (data, prepared) => ({
    before: { status: prepared.order.status, hold: `${formatThb(prepared.order.total)} held` },
    after: {
      status: `failed (${data.reason})`,
      hold: returnMovesMoney(prepared.order.holdState)
        ? `${formatThb(prepared.order.total)} back to the balance`
        : 'already released',
    },
  }),
  run: async (trx, prepared, data, context) => {
    const completed = await runOutcome(trx, prepared, data, context)
    return { platform_order_id: completed.platformOrderId, status: completed.status }
  },
})
