import { DateTime } from 'luxon'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import adminConfig from '#config/admin'
import ApprovalRequest, { pendingKeyOf } from '#approvals/models/approval_request'
import { approvableAction, type ApprovalTarget } from '#approvals/approvable_actions'
import { recordAudit, type Reason } from '#core/audit'
import { SYSTEM, type Actor } from '#core/actor'
import { ActionError } from '#core/validation'
import { AlreadyDone, atWhen, byWhom } from '#core/already_done'
import { isDuplicateKey } from '#core/db_retry'
import { formatAmount } from '#core/money'
import { notify } from '#notifications/notifications'
import { inTransaction } from '#core/transaction'

/** Whether acting on `amount` satang needs a second operator (threshold null: never). */
export function needsFourEyes(threshold: number | null, amount: number) {
  return threshold !== null && amount > threshold
}

/**
 * The audit details of an action an approved request carried out: which
 * request, asked by whom; null when the action was taken directly.
 */
export function approvalDetails(
  request: Pick<ApprovalRequest, 'id' | 'requestedByActor'> | null | undefined
) {
  return request
    ? { approval_request_id: request.id, requested_by: request.requestedByActor }
    : null
}

/** The request as the audit log and the queue show it. */
export function approvalSnapshot(request: ApprovalRequest) {
  return {
    status: request.status,
    kind: request.kind,
    action: request.action,
    target: `${request.targetType}:${request.targetId}`,
    amount: request.amount === null ? null : formatAmount(request.amount),
    requested_by: request.requestedByActor,
    decided_by: request.decidedByActor,
    expires_at: request.expiresAt.toISO(),
  }
}

/**
 * The request holding the pending slot of `kind` on `target`, locked (the
 * caller holds the target's lock, so nobody opens one meanwhile). One past
 * its expiry is closed as expired here (check on read): it no longer blocks
 * anything. Returns the live request or null.
 */
export async function livePendingRequest(
  trx: TransactionClientContract,
  kind: string,
  target: { type: string; id: string },
  now: DateTime = DateTime.utc()
) {
  const request = await ApprovalRequest.query({ client: trx })
    .where('pending_key', pendingKeyOf(kind, target))
    .forUpdate()
    .first()
  if (!request) return null
  if (request.isLive(now)) return request
  await closeAsExpired(trx, request, now)
  return null
}

/**
 * The refusal when a live request already waits on the same target and
 * kind. The same operator asking again (a double click, a second tab) is
 * told their request waits, as a notice: what they asked for holds.
 */
export function pendingRefusal(
  request: ApprovalRequest,
  field: string | null = null,
  actor?: Actor
) {
  const what = `approval request #${request.id} (${request.kind} on ${request.targetType} ${request.targetId})`
  const asked = `${byWhom(request.requestedByActor, actor)} at ${atWhen(request.createdAt)}`
  if (actor && request.requestedByActor === actor.name) {
    return new AlreadyDone(
      `${what} was already asked by ${asked}; it waits for a second operator, nothing more to do`
    )
  }
  const message = `${what} is already pending, asked by ${asked}; it must be approved or rejected first`
  return field ? ActionError.field(field, message) : ActionError.general(message)
}

export interface OpenRequest {
  action: string
  target: ApprovalTarget
  /** The action's validated input: what approval will run. */
  input: Record<string, unknown>
  /** What the action's prepare step returned (the locked target). */
  prepared: unknown
  actor: Actor
  reason: Reason
  now?: DateTime
}

/**
 * The direct form of an approvable action, in the caller's transaction:
 * refused while a request of the same kind waits on the target (even below
 * the threshold: the pending decision comes first); above the platform's
 * four-eyes threshold the request is opened instead of acting; otherwise
 * `run` acts. Every approvable action goes through here.
 */
export async function actOrRequestApproval<Result>(
  trx: TransactionClientContract,
  open: OpenRequest & {
    threshold: number | null
    amount: number
    /** The form field a pending-request refusal belongs to. */
    field?: string | null
    run: () => Promise<Result>
  }
): Promise<{ request: ApprovalRequest; result: null } | { request: null; result: Result }> {
  const live = await livePendingRequest(trx, approvableAction(open.action).kind, open.target)
  if (live) throw pendingRefusal(live, open.field ?? null, open.actor)
  if (needsFourEyes(open.threshold, open.amount)) {
    return { request: await openApprovalRequest(trx, open), result: null }
  }
  return { request: null, result: await open.run() }
}

/**
 * Opens a four-eyes request in the caller's transaction, instead of acting:
 * refused while a live request holds the same target and kind (the unique
 * pending_key also stops two opened at once), then the action's `opened`
 * hook (e.g. the order waits for the decision instead of expiring) and the
 * audit row.
 */
export async function openApprovalRequest(trx: TransactionClientContract, open: OpenRequest) {
  const entry = approvableAction(open.action)
  const now = open.now ?? DateTime.utc()
  const live = await livePendingRequest(trx, entry.kind, open.target, now)
  if (live) throw pendingRefusal(live, null, open.actor)

  const change = entry.change?.(open.input as never, open.prepared as never) ?? null
  let request: ApprovalRequest
  try {
    request = await ApprovalRequest.create(
      {
        kind: entry.kind,
        targetType: open.target.type,
        targetId: open.target.id,
        action: open.action,
        input: open.input,
        amount: open.target.amount,
        requestedBy: open.actor.operatorId ?? null,
        requestedByActor: open.actor.name,
        reviewedBy: open.target.reviewedBy,
        status: 'pending',
        pendingKey: pendingKeyOf(entry.kind, open.target),
        reasonCode: open.reason.code ?? null,
        comment: open.reason.comment ?? null,
        expiresAt: now.plus({ hours: adminConfig.approvals.expiryHours }),
        changeBefore: change?.before ?? null,
        changeAfter: change?.after ?? null,
      },
      { client: trx }
    )
  } catch (error) {
    if (!isDuplicateKey(error)) throw error
    // A request opened at the same moment won: the duplicate key waited for
    // its commit, so a locking read sees it and can say who asked.
    const winner = await ApprovalRequest.query({ client: trx })
      .where('pending_key', pendingKeyOf(entry.kind, open.target))
      .forUpdate()
      .first()
    if (winner) throw pendingRefusal(winner, null, open.actor)
    throw ActionError.general(
      `an approval request (${entry.kind} on ${open.target.type} ${open.target.id}) is already pending; it must be approved or rejected first`
    )
  }
  await entry.opened?.(trx, open.prepared, request)
  await recordAudit(trx, open.actor, {
    action: 'approval.request',
    target: { type: request.targetType, id: request.targetId },
    after: approvalSnapshot(request),
    reason: open.reason,
    details: {
      approval_request_id: request.id,
      describe: entry.describe(open.input),
      input: open.input,
      reviewed_by: request.reviewedBy,
      ...(change ? { change } : {}),
    },
  })
  if (entry.sensitive) {
    await notify(trx, {
      kind: 'request',
      action: entry.name,
      summary: `${open.actor.name.replace(/^operator:/, '')} asks to ${entry.describe(open.input)} (approval request #${request.id})`,
      actor: open.actor,
      target: { type: request.targetType, id: request.targetId },
      approvalRequestId: request.id,
    })
  }
  return request
}

const CLOSE_AUDIT_ACTIONS = {
  rejected: 'approval.reject',
  expired: 'approval.expire',
  superseded: 'approval.supersede',
} as const

/**
 * Ends a pending request without running it (rejected, expired, or
 * superseded by a direct change of the same thing): frees its pending slot,
 * runs the action's `closed` hook, records who and why.
 */
export async function closeRequest(
  trx: TransactionClientContract,
  request: ApprovalRequest,
  outcome: keyof typeof CLOSE_AUDIT_ACTIONS,
  actor: Actor,
  reason: Reason = {},
  now: DateTime = DateTime.utc()
) {
  const entry = approvableAction(request.action)
  const before = approvalSnapshot(request)
  request.merge({
    status: outcome,
    pendingKey: null,
    decidedBy: actor.operatorId ?? null,
    decidedByActor: actor.name,
    decidedAt: now,
    decisionReasonCode: reason.code ?? null,
    decisionComment: reason.comment ?? null,
  })
  await request.useTransaction(trx).save()
  if (entry.closed) await entry.closed(trx, await entry.validate(request.input), request)
  await recordAudit(trx, actor, {
    action: CLOSE_AUDIT_ACTIONS[outcome],
    target: { type: request.targetType, id: request.targetId },
    before: { status: before.status },
    after: { status: request.status },
    reason,
    details: { approval_request_id: request.id, kind: request.kind, action: request.action },
  })
}

/**
 * A direct change made what a pending request asks for moot (the command
 * line's break-glass applied it, or a stricter value was set): the live
 * request of `kind` on `target`, if any, is closed as superseded in the
 * caller's transaction (the caller holds the target's lock), with `actor`
 * and the reason in the request and the audit log. Returns it, or null.
 */
export async function supersedePendingRequest(
  trx: TransactionClientContract,
  kind: string,
  target: { type: string; id: string },
  actor: Actor,
  comment: string
) {
  const live = await livePendingRequest(trx, kind, target)
  if (!live) return null
  await closeRequest(trx, live, 'superseded', actor, { code: 'superseded', comment })
  return live
}

function closeAsExpired(trx: TransactionClientContract, request: ApprovalRequest, now: DateTime) {
  return closeRequest(
    trx,
    request,
    'expired',
    SYSTEM,
    {
      code: 'expired',
      comment: `not decided within ${adminConfig.approvals.expiryHours} h`,
    },
    now
  )
}

/**
 * Marks every pending request past its expiry as expired, each in its own
 * transaction (the worker's sweep; approving or rejecting one also checks).
 * Returns how many this call expired.
 */
export async function expireDueApprovalRequests(now: DateTime = DateTime.utc(), batch = 500) {
  const due = await ApprovalRequest.query()
    .where('status', 'pending')
    .where('expires_at', '<=', now.toJSDate())
    .orderBy('expires_at')
    .limit(batch)
    .select('id')
  let expired = 0
  for (const { id } of due) {
    const done = await inTransaction(async (trx) => {
      const request = await ApprovalRequest.query({ client: trx })
        .where('id', id)
        .forUpdate()
        .first()
      if (!request || request.status !== 'pending' || request.isLive(now)) return false
      await closeAsExpired(trx, request, now)
      return true
    })
    if (done) expired++
  }
  return expired
}

/** The request by id, locked; an ActionError naming the field when there is none. */
export async function lockRequest(trx: TransactionClientContract, id: number, field: string) {
  const request = await ApprovalRequest.query({ client: trx }).where('id', id).forUpdate().first()
  if (!request) throw ActionError.notFound(field, `no approval request #${id}`)
  return request
}

/**
 * Why a request can no longer be decided, or null when it can. A pending
 * request past its expiry is closed as expired first (in `trx`), so the
 * caller must commit before refusing.
 */
export async function undecidableReason(
  trx: TransactionClientContract,
  request: ApprovalRequest,
  now: DateTime = DateTime.utc(),
  actor?: Actor,
  /** The decision being asked: when the request already has it, an AlreadyDone notice. */
  wanted?: 'approved' | 'rejected'
): Promise<string | AlreadyDone | null> {
  if (request.status === 'pending' && !request.isLive(now)) {
    await closeAsExpired(trx, request, now)
    return `approval request #${request.id} expired at ${request.expiresAt.toISO()}; it can no longer be decided`
  }
  if (request.status !== 'pending') {
    const by = request.decidedByActor ? ` by ${byWhom(request.decidedByActor, actor)}` : ''
    const at = request.decidedAt ? ` at ${atWhen(request.decidedAt)}` : ''
    const decided = `approval request #${request.id} was already ${request.status}${by}${at}`
    // The same decision already taken (a double click, a colleague first) holds.
    if (wanted && request.status === wanted)
      return new AlreadyDone(`${decided}; nothing more to do`)
    return `${decided}; nothing was done`
  }
  return null
}
