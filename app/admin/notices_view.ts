import { formatGatewayDateTime } from '#core/clock'
import type { NotificationView } from '#notifications/notifications'

/** A notice as the dashboard and the notifications page show it: what, who, when, where to look. */
export function presentNotice(notice: NotificationView) {
  return {
    id: notice.id,
    kind: notice.kind,
    label:
      notice.kind === 'break_glass'
        ? 'break-glass'
        : notice.kind === 'alert'
          ? 'alert'
          : 'approval requested',
    action: notice.action,
    summary: notice.summary,
    at: formatGatewayDateTime(notice.created_at),
    acked: notice.acked_at !== null,
    href:
      notice.approval_request_id !== null
        ? `/admin/review/approvals#approval-${notice.approval_request_id}`
        : notice.kind === 'alert' && notice.target_type === 'statement_source'
          ? `/admin/statement-sources/${notice.target_id}`
          : '/admin/audit?action=break_glass.use',
  }
}
