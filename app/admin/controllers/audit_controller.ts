import type { HttpContext } from '@adonisjs/core/http'
import { Readable } from 'node:stream'
import { stringify } from 'csv-stringify'
import db from '@adonisjs/lucid/services/db'
import { auditQuery, auditRows, type AuditFilters } from '#core/audit_query'
import { recordAudit } from '#core/audit'
import { formatGatewayDateTime } from '#core/clock'
import type AuditLog from '#core/audit_log'
import { operatorActor } from '#admin/operator_action'

const PER_PAGE = 25
const FILTERS = ['actor', 'action', 'target', 'from', 'to'] as const

function filtersOf(ctx: HttpContext): AuditFilters {
  const filters: AuditFilters = {}
  for (const key of FILTERS) {
    const value = String(ctx.request.input(key, '')).trim()
    if (value) filters[key] = value.slice(0, 120)
  }
  return filters
}

/**
 * What changed, one line per field: "before → after" for a change; for a
 * creation (nothing before) only the values set, without the empty ones.
 */
function changeLines(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null
) {
  const show = (value: unknown) => JSON.stringify(value ?? null)
  if (!before) {
    return Object.entries(after ?? {})
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([key, value]) => ({ key, text: show(value) }))
  }
  return Object.keys({ ...before, ...after }).map((key) => ({
    key,
    text: `${show(before[key])} → ${show(after?.[key])}`,
  }))
}

function row(entry: AuditLog) {
  return {
    changes: changeLines(entry.beforeValues, entry.afterValues),
    id: entry.id,
    time: formatGatewayDateTime(entry.createdAt),
    actor: entry.actor,
    action: entry.action,
    target: entry.subjectType ? `${entry.subjectType}:${entry.subjectId ?? ''}` : '',
    before: entry.beforeValues,
    after: entry.afterValues,
    reason_code: entry.reasonCode,
    comment: entry.comment,
    details: entry.details,
    ip: entry.ip,
    request_id: entry.requestId,
  }
}

/**
 * The audit log: every row, from the panel and the CLI, with before and after
 * values; filterable, paginated, exportable as CSV. Read-only: there is no
 * route that edits or deletes an entry, and the database refuses it anyway.
 */
export default class AuditController {
  async index(ctx: HttpContext) {
    const filters = filtersOf(ctx)
    const page = Math.max(1, Number(ctx.request.input('page', 1)) || 1)
    const entries = await auditQuery(filters).paginate(page, PER_PAGE)
    const query = (to: number) => new URLSearchParams({ ...filters, page: String(to) }).toString()
    return ctx.view.render('admin/audit', {
      filters,
      entries: entries.all().map(row),
      page: entries,
      query,
      exportQuery: new URLSearchParams({ ...filters }).toString(),
    })
  }

  /** Everything the filters match as CSV, streamed; the export itself is audited. */
  async export(ctx: HttpContext) {
    const filters = filtersOf(ctx)
    await db.transaction((trx) =>
      recordAudit(trx, operatorActor(ctx), {
        action: 'audit.export',
        target: { type: 'audit_log', id: 'csv' },
        details: { filters },
      })
    )
    const csv = stringify({
      header: true,
      columns: [
        'id',
        'time',
        'actor',
        'action',
        'target',
        'before',
        'after',
        'reason_code',
        'comment',
        'details',
        'ip',
        'request_id',
      ],
      cast: { object: (value) => JSON.stringify(value) },
    })
    Readable.from(
      (async function* () {
        for await (const entry of auditRows(filters)) yield row(entry)
      })()
    ).pipe(csv)
    ctx.response.header('Content-Type', 'text/csv; charset=utf-8')
    ctx.response.header(
      'Content-Disposition',
      `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.csv"`
    )
    ctx.response.stream(csv)
  }
}
