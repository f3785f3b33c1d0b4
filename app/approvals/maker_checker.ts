import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type ApprovalRequest from '#approvals/models/approval_request'
import { approvableAction } from '#approvals/approvable_actions'
import {
  livePendingRequest,
  openApprovalRequest,
  pendingRefusal,
  type OpenRequest,
} from '#approvals/approval_requests'
import { recordBreakGlass } from '#notifications/notifications'
import type { Actor } from '#core/actor'

/** An operator signed in to the back-office (as opposed to the server's shell or the worker). */
export function actsInBackOffice(actor: Actor) {
  return actor.operatorId !== undefined && actor.operatorId !== null
}

/** An operator typing a command on a server: beyond four eyes, so every such change is break-glass. */
export function actsFromShell(actor: Actor) {
  return !actsInBackOffice(actor) && actor.name.startsWith('cli:')
}

/**
 * A change that decides where money goes (an account, a route, a secret, a
 * role): never one person's decision in the back-office. There it opens an
 * approval request that a second operator carries out as stored; from the
 * server's shell it applies at once (`run`) and is recorded as a
 * break-glass use, audited and notified to every admin. Refused while a
 * request of the same kind waits on the target. Every maker-checker action
 * goes through here; it is registered as an approvable action with
 * `sensitive: true`.
 */
export async function askOrApplyFromShell<Result>(
  trx: TransactionClientContract,
  open: OpenRequest & {
    /** The form field a pending-request refusal belongs to. */
    field?: string | null
    /** For the break-glass record: what was done, in words. */
    summary: string
    run: () => Promise<Result>
  }
): Promise<{ request: ApprovalRequest; result: null } | { request: null; result: Result }> {
  const entry = approvableAction(open.action)
  const live = await livePendingRequest(trx, entry.kind, open.target)
  if (live) throw pendingRefusal(live, open.field ?? null, open.actor)
  if (actsInBackOffice(open.actor)) {
    return { request: await openApprovalRequest(trx, open), result: null }
  }
  const result = await open.run()
  if (actsFromShell(open.actor)) {
    await recordBreakGlass(trx, open.actor, {
      action: open.action,
      summary: open.summary,
      target: { type: open.target.type, id: open.target.id },
    })
  }
  return { request: null, result }
}
