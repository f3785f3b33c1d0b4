import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import AuditLog from '#models/audit_log'
import { userInfo } from 'node:os'

/** The actor recorded for commands typed by an operator on a server. */
export function cliActor(): string {
  let name = 'unknown'
  try {
    name = userInfo().username
  } catch {}
  return `cli:${name}`
}

export async function recordAudit(
  entry: {
    actor: string
    action: string
    subjectType?: string
    subjectId?: string
    details?: Record<string, unknown>
  },
  trx?: TransactionClientContract
) {
  return AuditLog.create(
    {
      actor: entry.actor,
      action: entry.action,
      subjectType: entry.subjectType ?? null,
      subjectId: entry.subjectId ?? null,
      details: entry.details ?? null,
    },
    { client: trx }
  )
}
