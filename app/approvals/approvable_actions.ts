import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import type { OperatorRole } from '#operators/roles'
import type { Actor } from '#core/actor'
import { ActionError } from '#core/validation'
import {
  markPaymentPaidValidator,
  MARK_PAID_MESSAGES,
  prepareMarkPaid,
  runMarkPaid,
  releaseReviewHold,
  holdForReview,
  type MarkPaidData,
  type MarkPaidPrepared,
} from '#payments/actions/mark_payment_paid'
import {
  depositsOnValidator,
  fourEyesThresholdValidator,
  prepareDepositsOn,
  prepareFourEyesThreshold,
  runDepositsOn,
  runFourEyesThreshold,
  type DepositsOnData,
  type FourEyesThresholdData,
} from '#merchants/actions/configure_platform'
import {
  attachStatementLineValidator,
  ATTACH_LINE_MESSAGES,
  prepareAttachLine,
  runAttachLine,
  type AttachLineData,
  type AttachLinePrepared,
} from '#reconciliation/actions/attach_statement_line'
import {
  creditMerchantFromLineValidator,
  CREDIT_LINE_MESSAGES,
  prepareCreditLine,
  runCreditLine,
  type CreditLineData,
  type CreditLinePrepared,
} from '#reconciliation/actions/credit_merchant_from_line'
import { validateInput } from '#core/validation'
import { assertNotFrozenForApproval } from '#payments/frozen_orders'
import { formatAmount } from '#core/money'

/** What a request is about, as the queue shows it and the four-eyes rules read it. */
export interface ApprovalTarget {
  type: string
  id: string
  /** Satang at stake (null: no amount, e.g. a platform switch). */
  amount: number | null
  /** The operator who reviewed the evidence (a slip): may not approve. */
  reviewedBy: number | null
}

export interface RunContext {
  /** Who carries the action out: the approver, or the operator acting directly. */
  actor: Actor
  /** The approved request, when the action runs on approval. */
  request: ApprovalRequest | null
}

/**
 * One action that can wait for a second operator. Each step runs inside the
 * caller's transaction: the direct action and the approval share them, so
 * an approved request does exactly what the action would have done.
 *
 * - validate: the action's VineJS schema; the request stores its output and
 *   approval validates it again.
 * - prepare: locks the target and checks its state allows the action now
 *   (ActionError otherwise); on approval this is the re-check.
 * - run: the change, its ledger/callback/events and its own audit row.
 * - opened / closed: what a pending request means for its target (an order
 *   under review does not expire) and what its end undoes.
 */
export interface ApprovableAction<Data = any, Prepared extends { target: ApprovalTarget } = any> {
  kind: string
  /** The least role that may approve (and reject) it. */
  approverRole: OperatorRole
  /** In words, for the queue: "mark payment … successful". */
  describe(data: Data): string
  validate(input: Record<string, unknown>): Promise<Data>
  /** `actor`: who asks (opening) or approves (the re-check). */
  prepare(trx: TransactionClientContract, data: Data, actor: Actor): Promise<Prepared>
  run(
    trx: TransactionClientContract,
    prepared: Prepared,
    data: Data,
    context: RunContext
  ): Promise<Record<string, unknown>>
  /**
   * On approval only, after prepare (the target locked in this transaction):
   * throws a refusal that leaves the request pending when carrying it out
   * must wait (money on a frozen order). The direct action does not ask.
   */
  approvable?(
    trx: TransactionClientContract,
    prepared: Prepared,
    request: ApprovalRequest
  ): Promise<void>
  opened?(
    trx: TransactionClientContract,
    prepared: Prepared,
    request: ApprovalRequest
  ): Promise<void>
  closed?(trx: TransactionClientContract, data: Data, request: ApprovalRequest): Promise<void>
}

/**
 * The registry: action name → how to run it in a given transaction. Kinds
 * and names are literals here (not imported constants) so that the modules
 * that import this one can be loaded in any order. The two statement-line
 * decisions share the kind "line_decision" (one pending request per line,
 * whichever decision it asks for); returning a line to the payer needs no
 * second operator.
 */
export const APPROVABLE_ACTIONS = {
  'payment.mark_paid': {
    kind: 'mark_paid',
    approverRole: 'operator',
    describe: (data) =>
      `mark payment ${data.platform_order_id} successful` +
      (data.slip_id ? ` (slip ${data.slip_id})` : ''),
    validate: (input) => validateInput(markPaymentPaidValidator, input, MARK_PAID_MESSAGES),
    prepare: (trx, data, actor) => prepareMarkPaid(trx, data, actor),
    run: (trx, prepared, data, context) => runMarkPaid(trx, prepared, data, context),
    approvable: (trx, prepared, request) =>
      assertNotFrozenForApproval(trx, prepared.order, request.id),
    opened: (trx, prepared, request) => holdForReview(trx, prepared.order, request),
    closed: (trx, data, request) => releaseReviewHold(trx, data, request),
  } satisfies ApprovableAction<MarkPaidData, MarkPaidPrepared>,

  'platform.enable_deposits': {
    kind: 'enable_deposits',
    approverRole: 'admin',
    describe: (data) => `switch deposits of platform ${data.code} back on`,
    validate: (input) => validateInput(depositsOnValidator, input),
    prepare: (trx, data) => prepareDepositsOn(trx, data),
    run: (trx, prepared, data, context) => runDepositsOn(trx, prepared, data, context),
  } satisfies ApprovableAction<DepositsOnData, Awaited<ReturnType<typeof prepareDepositsOn>>>,

  'platform.four_eyes_threshold': {
    kind: 'four_eyes_threshold',
    approverRole: 'admin',
    describe: (data) =>
      `set the four-eyes threshold of platform ${data.code} to ` +
      (data.four_eyes_threshold === null ? 'none' : formatAmount(data.four_eyes_threshold)),
    validate: (input) => validateInput(fourEyesThresholdValidator, input),
    prepare: (trx, data) => prepareFourEyesThreshold(trx, data),
    run: (trx, prepared, data, context) => runFourEyesThreshold(trx, prepared, data, context),
  } satisfies ApprovableAction<
    FourEyesThresholdData,
    Awaited<ReturnType<typeof prepareFourEyesThreshold>>
  >,

  'statement_line.attach': {
    kind: 'line_decision',
    approverRole: 'operator',
    describe: (data) =>
      `attach statement line #${data.statement_line_id} to payment ${data.platform_order_id}`,
    validate: (input) => validateInput(attachStatementLineValidator, input, ATTACH_LINE_MESSAGES),
    prepare: (trx, data, actor) => prepareAttachLine(trx, data, actor),
    run: (trx, prepared, data, context) => runAttachLine(trx, prepared, data, context),
    approvable: (trx, prepared, request) =>
      assertNotFrozenForApproval(trx, prepared.order, request.id),
  } satisfies ApprovableAction<AttachLineData, AttachLinePrepared>,

  'statement_line.credit_merchant': {
    kind: 'line_decision',
    approverRole: 'operator',
    describe: (data) =>
      `credit statement line #${data.statement_line_id} to merchant ${data.merchant_id}`,
    validate: (input) =>
      validateInput(creditMerchantFromLineValidator, input, CREDIT_LINE_MESSAGES),
    prepare: (trx, data, actor) => prepareCreditLine(trx, data, actor),
    run: (trx, prepared, data, context) => runCreditLine(trx, prepared, data, context),
  } satisfies ApprovableAction<CreditLineData, CreditLinePrepared>,
} as const satisfies Record<string, ApprovableAction>

export type ApprovableActionName = keyof typeof APPROVABLE_ACTIONS

export const APPROVABLE_ACTION_NAMES = Object.keys(APPROVABLE_ACTIONS) as ApprovableActionName[]

export function isApprovableActionName(name: unknown): name is ApprovableActionName {
  return typeof name === 'string' && Object.hasOwn(APPROVABLE_ACTIONS, name)
}

/** The registry's entry, or an ActionError naming the field. */
export function approvableAction(name: string, field = 'action'): ApprovableAction {
  if (!isApprovableActionName(name)) {
    throw ActionError.field(
      field,
      `${field} must be one of: ${APPROVABLE_ACTION_NAMES.join(', ')} (got "${name}")`
    )
  }
  return APPROVABLE_ACTIONS[name]
}
