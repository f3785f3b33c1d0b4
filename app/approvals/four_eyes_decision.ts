import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import type { ApprovalTarget } from '#approvals/approvable_actions'
import { actOrRequestApproval } from '#approvals/approval_requests'
import type { Reason } from '#core/audit'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

/** What an action's prepare step hands the four-eyes rule. */
export interface FourEyesPrepared<Prepared extends { target: ApprovalTarget }> {
  /** The target locked and checked, as the action's run step takes it. */
  prepared: Prepared
  /** The platform's four-eyes threshold in satang (null: never). */
  threshold: number | null
  /** The satang that move, which the threshold judges. */
  amount: number
}

export interface FourEyesDecision<
  Data extends Record<string, unknown>,
  Prepared extends { target: ApprovalTarget },
  Result,
> {
  /** The registered approvable action's name: "payment.mark_paid". */
  action: string
  /** The action's validated input: what an approval will run again. */
  data: Data
  actor: Actor
  reason: Reason
  /** The form field a pending-request refusal belongs to. */
  field?: string | null
  /** Locks the target and checks it allows the decision now (refusals are thrown). */
  prepare(trx: TransactionClientContract): Promise<FourEyesPrepared<Prepared>>
  /** The change itself, when no second operator is needed. */
  run(trx: TransactionClientContract, prepared: Prepared): Promise<Result>
}

export type FourEyesOutcome<Prepared, Result> =
  | { prepared: Prepared; request: ApprovalRequest; result: null }
  | { prepared: Prepared; request: null; result: Result }

/**
 * An operator's money decision under the four-eyes rule, in one transaction
 * run again whole on a deadlock: prepare (lock and check), then, unless a
 * request already waits on the target, act at once or, above the
 * threshold, open an approval request instead (actOrRequestApproval).
 * Returns what prepare locked with the request opened or the run's result.
 */
export function decideWithFourEyes<
  Data extends Record<string, unknown>,
  Prepared extends { target: ApprovalTarget },
  Result,
>(decision: FourEyesDecision<Data, Prepared, Result>): Promise<FourEyesOutcome<Prepared, Result>> {
  return inTransaction(async (trx) => {
    const { prepared, threshold, amount } = await decision.prepare(trx)
    const outcome = await actOrRequestApproval(trx, {
      action: decision.action,
      target: prepared.target,
      input: decision.data,
      prepared,
      actor: decision.actor,
      reason: decision.reason,
      threshold,
      amount,
      field: decision.field,
      run: () => decision.run(trx, prepared),
    })
    return outcome.request
      ? { prepared, request: outcome.request, result: null }
      : { prepared, request: null, result: outcome.result }
  })
}
