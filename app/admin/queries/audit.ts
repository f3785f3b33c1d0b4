import { DateTime } from 'luxon'
import AuditLog from '#core/audit_log'
import { GATEWAY_ZONE } from '#core/clock'

/** Filters of the audit log screen and its export. */
export interface AuditFilters {
  actor?: string
  action?: string
  target?: string
  /** YYYY-MM-DD, Bangkok time, inclusive. */
  from?: string
  to?: string
}

function day(value: string | undefined, edge: 'start' | 'end') {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null
  const local = DateTime.fromISO(value, { zone: GATEWAY_ZONE })
  if (!local.isValid) return null
  return (edge === 'start' ? local.startOf('day') : local.endOf('day')).toUTC().toJSDate()
}

/**
 * Audit rows matching the filters, newest first: actor and action match from
 * their start ("operator:" finds every operator, "merchant." every merchant
 * action), target is the subject id or "type:id".
 */
export function auditQuery(filters: AuditFilters) {
  const query = AuditLog.query().orderBy('id', 'desc')
  if (filters.actor) query.where('actor', 'like', `${escapeLike(filters.actor)}%`)
  if (filters.action) query.where('action', 'like', `${escapeLike(filters.action)}%`)
  if (filters.target) {
    const [type, id] = filters.target.includes(':')
      ? filters.target.split(':', 2)
      : [undefined, filters.target]
    if (type) query.where('subject_type', type)
    if (id) query.where('subject_id', id)
  }
  const from = day(filters.from, 'start')
  const to = day(filters.to, 'end')
  if (from) query.where('created_at', '>=', from)
  if (to) query.where('created_at', '<=', to)
  return query
}

function escapeLike(value: string) {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`)
}

/**
 * Every matching row, a batch at a time (keyset on id), so that an export of
 * any size runs in constant memory.
 */
export async function* auditRows(filters: AuditFilters, batch = 1000) {
  let before: number | null = null
  for (;;) {
    const query = auditQuery(filters).limit(batch)
    if (before !== null) query.where('id', '<', before)
    const rows = await query
    if (rows.length === 0) return
    yield* rows
    before = rows[rows.length - 1].id
    if (rows.length < batch) return
  }
}
