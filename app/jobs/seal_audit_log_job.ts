import { sealAuditLog } from '#core/audit_chain'

/**
 * audit.seal — appends the seals of the audit rows written since the last
 * run (app/core/audit_chain.ts). Idempotent: a row has at most one seal, and
 * concurrent runs queue on the chain's head row.
 */
export default async function sealAuditLogJob() {
  return sealAuditLog()
}
