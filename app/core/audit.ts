import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import AuditLog from '#core/audit_log'
import type { Actor } from '#core/actor'

/** A decision's reason: a code from the action's list and the operator's words. */
export interface Reason {
  code?: string | null
  comment?: string | null
}

export interface AuditEntry {
  action: string
  /** What was acted on: ("merchant", "M123456789"), ("deposit_account", "12"), ... */
  target?: { type: string; id: string }
  /** Values before and after the change (never credentials). */
  before?: Record<string, unknown> | null
  after?: Record<string, unknown> | null
  reason?: Reason
  /** Anything else worth keeping (counts, file names). */
  details?: Record<string, unknown> | null
}

/**
 * Appends one audit row, inside the caller's transaction: the change and its
 * record commit or roll back together. Rows are never updated or deleted
 * (triggers refuse it).
 */
export async function recordAudit(trx: TransactionClientContract, actor: Actor, entry: AuditEntry) {
  return AuditLog.create(
    {
      actor: actor.name,
      operatorId: actor.operatorId ?? null,
      action: entry.action,
      subjectType: entry.target?.type ?? null,
      subjectId: entry.target?.id ?? null,
      beforeValues: entry.before ?? null,
      afterValues: entry.after ?? null,
      reasonCode: entry.reason?.code ?? null,
      comment: entry.reason?.comment ?? null,
      details: entry.details ?? null,
      ip: actor.ip ?? null,
      requestId: actor.requestId ?? null,
    },
    { client: trx }
  )
}

/**
 * The fields that differ between two snapshots, as { before, after } holding
 * only those fields (empty objects when nothing changed).
 */
export function changedValues(
  before: Record<string, unknown>,
  after: Record<string, unknown>
): { before: Record<string, unknown>; after: Record<string, unknown>; changed: string[] } {
  const changed = Object.keys(after).filter(
    (key) => JSON.stringify(before[key] ?? null) !== JSON.stringify(after[key] ?? null)
  )
  return {
    before: Object.fromEntries(changed.map((key) => [key, before[key] ?? null])),
    after: Object.fromEntries(changed.map((key) => [key, after[key] ?? null])),
    changed,
  }
}
