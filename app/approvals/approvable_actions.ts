import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import type { OperatorRole } from '#operators/roles'
import type { Actor } from '#core/actor'
import { ActionError } from '#core/validation'

/*
 * The approvals core knows approvable actions only through this registry:
 * each action's own module registers it when it is loaded, so the core
 * imports none of them (they import the core to open their requests).
 * start/approvable_actions.ts, a preload, loads those modules in every
 * process (web, worker, Ace, tests) before any request can be decided; a
 * name nobody registered is an error, never a silent no-op.
 */

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
  /** The registry's name, stored in the request: "payment.mark_paid". */
  name: string
  /**
   * One pending request per target and kind: actions that must not wait side
   * by side share a kind (the statement-line decisions: "line_decision").
   */
  kind: string
  /** The least role that may approve (and reject) it. */
  approverRole: OperatorRole
  /** In words, for the queue: "mark payment … successful". */
  describe(data: Data): string
  /**
   * A money-directing change (where money goes, who may decide): every admin
   * is notified when a request opens (app/notifications), and the card
   * shows the change's before and after.
   */
  sensitive?: boolean
  /**
   * The values the request would change, now and as asked, for the request
   * card; computed once, when the request opens, from the locked target.
   */
  change?(
    data: Data,
    prepared: Prepared
  ): { before: Record<string, unknown>; after: Record<string, unknown> }
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

const REGISTRY = new Map<string, ApprovableAction>()

/**
 * Adds an action to the registry (called by the action's module as it
 * loads). A module loaded again (development reloads) replaces its entry.
 */
export function registerApprovableAction<Data, Prepared extends { target: ApprovalTarget }>(
  action: ApprovableAction<Data, Prepared>
) {
  REGISTRY.set(action.name, action as ApprovableAction)
  return action
}

/** The registered names, in registration order. */
export function approvableActionNames() {
  return [...REGISTRY.keys()]
}

/** The registered entry, or null (e.g. to show a request of an action since removed). */
export function findApprovableAction(name: string): ApprovableAction | null {
  return REGISTRY.get(name) ?? null
}

/**
 * The registered entry of a stored request or a direct action: a name
 * without an entry means the action's module was never loaded in this
 * process, which must fail loudly rather than leave a request undecidable.
 */
export function approvableAction(name: string): ApprovableAction {
  const entry = REGISTRY.get(name)
  if (!entry) throw unregistered(name)
  return entry
}

/** The entry an operator named (a form or command field): unknown names are their mistake. */
export function requestedApprovableAction(name: string, field = 'action'): ApprovableAction {
  const entry = REGISTRY.get(name)
  if (entry) return entry
  if (REGISTRY.size === 0) throw unregistered(name)
  throw ActionError.field(
    field,
    `${field} must be one of: ${approvableActionNames().join(', ')} (got "${name}")`
  )
}

function unregistered(name: string) {
  return new Error(
    `no approvable action registered for "${name}": its module must be imported by start/approvable_actions.ts`
  )
}
