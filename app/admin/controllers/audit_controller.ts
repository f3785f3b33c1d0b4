import type { HttpContext } from '@adonisjs/core/http'
import type { AuditFilters } from '#admin/queries/audit'
import { auditCsv, auditPage } from '#admin/views/audit'
import { exportAuditLog } from '#operators/actions/export_audit_log'
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
 * The audit log: every row, from the panel and the CLI, with before and after
 * values; filterable, paginated, exportable as CSV. Read-only: there is no
 * route that edits or deletes an entry, and the database refuses it anyway.
 */
export default class AuditController {
  async index(ctx: HttpContext) {
    const pageNumber = Math.max(1, Number(ctx.request.input('page', 1)) || 1)
    const page = await auditPage(filtersOf(ctx), pageNumber, PER_PAGE)
    return ctx.view.render('admin/audit', page)
  }

  /** Everything the filters match as CSV, streamed; the export itself is audited. */
  async export(ctx: HttpContext) {
    const filters = filtersOf(ctx)
    await exportAuditLog({ ...filters }, operatorActor(ctx))
    ctx.response.header('Content-Type', 'text/csv; charset=utf-8')
    ctx.response.header(
      'Content-Disposition',
      `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.csv"`
    )
    ctx.response.stream(auditCsv(filters))
  }
}
