import { recordAudit } from '#core/audit'
import { inTransaction } from '#core/transaction'
import type { Actor } from '#core/actor'

/**
 * An operator exports the audit log (as CSV, the rows the filters match):
 * the export itself is audited, with its filters, before a row is sent.
 */
export async function exportAuditLog(filters: Record<string, string>, actor: Actor) {
  await inTransaction((trx) =>
    recordAudit(trx, actor, {
      action: 'audit.export',
      target: { type: 'audit_log', id: 'csv' },
      details: { filters },
    })
  )
}
