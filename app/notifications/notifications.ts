import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import logger from '@adonisjs/core/services/logger'
import adminConfig from '#config/admin'
import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'
import { sendOperatorMail } from '#notifications/mail'

/**
 * What every admin must see at once (issue: "Other admins see it at once"):
 * a sensitive approval request opened (a change of where money goes or who
 * may decide), or a break-glass use (such a change made from the server's
 * shell, beyond four eyes). A notice stays on each admin's dashboard and in
 * the notifications area until that admin acknowledges it, and is mailed to
 * every other admin by the worker (mailPendingNotifications). An `alert` is
 * the gateway's own: a bank channel it cannot fetch statements from, a
 * day's statement missing past its hour (app/reconciliation/fetch).
 */
export type NotificationKind = 'request' | 'break_glass' | 'alert'

export interface Notice {
  kind: NotificationKind
  /** The action concerned: "deposit_account.create", "merchant.rotate_credentials"... */
  action: string
  /** In words, naming who and what. */
  summary: string
  actor: Actor
  target?: { type: string; id: string } | null
  approvalRequestId?: number | null
}

/** Records a notice in the caller's transaction: it exists exactly when the change or request does. */
export async function notify(trx: TransactionClientContract, notice: Notice) {
  const [id] = await trx.table('notifications').insert({
    kind: notice.kind,
    action: notice.action,
    summary: notice.summary.slice(0, 1000),
    actor: notice.actor.name,
    operator_id: notice.actor.operatorId ?? null,
    target_type: notice.target?.type ?? null,
    target_id: notice.target?.id ?? null,
    approval_request_id: notice.approvalRequestId ?? null,
    created_at: new Date(),
  })
  return Number(id)
}

/**
 * A money-directing change made from the server's shell (an Ace command):
 * it applies at once, since whoever holds the shell is beyond four eyes
 * anyway, and is audited as a break-glass use and notified to every admin.
 */
export async function recordBreakGlass(
  trx: TransactionClientContract,
  actor: Actor,
  use: { action: string; summary: string; target?: { type: string; id: string } | null }
) {
  await recordAudit(trx, actor, {
    action: 'break_glass.use',
    target: use.target ?? undefined,
    details: { action: use.action, summary: use.summary },
  })
  await notify(trx, {
    kind: 'break_glass',
    action: use.action,
    summary: `${actor.name} (break-glass, from the server) ${use.summary}`,
    actor,
    target: use.target,
  })
}

/** Notices older than this are no longer shown as unacknowledged (the audit log keeps them). */
const SHOWN_FOR_DAYS = 30

export interface NotificationView {
  id: number
  kind: NotificationKind
  action: string
  summary: string
  actor: string
  target_type: string | null
  target_id: string | null
  approval_request_id: number | null
  created_at: Date
  acked_at: Date | null
}

/**
 * The notices `operatorId` has not acknowledged: those of everyone else (an
 * admin knows what they asked), of the last SHOWN_FOR_DAYS.
 */
function unacknowledged(operatorId: number) {
  const since = new Date(Date.now() - SHOWN_FOR_DAYS * 86_400_000)
  return db
    .from('notifications as n')
    .leftJoin('notification_acks as a', (join) => {
      join.on('a.notification_id', 'n.id').andOnVal('a.operator_id', operatorId)
    })
    .whereNull('a.notification_id')
    .where('n.created_at', '>=', since)
    .where((query) => query.whereNull('n.operator_id').orWhereNot('n.operator_id', operatorId))
}

/** How many notices wait for `operatorId` (every back-office page shows it). */
export async function unacknowledgedCount(operatorId: number) {
  const row = await unacknowledged(operatorId).count('* as total').first()
  return Number(row?.total ?? 0)
}

/** The newest `limit` notices waiting for `operatorId`. */
export async function unacknowledgedNotices(operatorId: number, limit = 20) {
  const rows = await unacknowledged(operatorId).orderBy('n.id', 'desc').limit(limit).select('n.*')
  return rows.map(toView)
}

/** Every notice of the last days, newest first, with whether `operatorId` acknowledged it. */
export async function recentNotifications(operatorId: number, page: number, perPage = 25) {
  const result = await db
    .from('notifications as n')
    .leftJoin('notification_acks as a', (join) => {
      join.on('a.notification_id', 'n.id').andOnVal('a.operator_id', operatorId)
    })
    .orderBy('n.id', 'desc')
    .select('n.*', 'a.acked_at')
    .paginate(page, perPage)
  return { page: result, rows: result.all().map(toView) }
}

function toView(row: Record<string, any>): NotificationView {
  return {
    id: Number(row.id),
    kind: row.kind,
    action: String(row.action),
    summary: String(row.summary),
    actor: String(row.actor),
    target_type: row.target_type ?? null,
    target_id: row.target_id ?? null,
    approval_request_id: row.approval_request_id === null ? null : Number(row.approval_request_id),
    created_at: new Date(row.created_at),
    acked_at: row.acked_at ? new Date(row.acked_at) : null,
  }
}

/**
 * `operatorId` acknowledges notices (the ids given, or every one shown to
 * them): they leave that admin's dashboard, never anyone else's. Audited.
 * Returns how many were newly acknowledged.
 */
export async function acknowledgeNotifications(actor: Actor, ids: number[] | 'all') {
  const operatorId = actor.operatorId
  if (operatorId === undefined || operatorId === null) return 0
  return db.transaction(async (trx) => {
    const wanted =
      ids === 'all'
        ? (await unacknowledgedNotices(operatorId, 1000)).map((row) => row.id)
        : ids.filter((id) => Number.isInteger(id) && id > 0)
    if (wanted.length === 0) return 0
    const existing = await trx.from('notifications').whereIn('id', wanted).select('id')
    const now = new Date()
    let added = 0
    for (const { id } of existing) {
      const [result] = await trx.rawQuery(
        'INSERT IGNORE INTO notification_acks (notification_id, operator_id, acked_at) VALUES (?, ?, ?)',
        [id, operatorId, now]
      )
      added += Number(result.affectedRows ?? 0)
    }
    if (added > 0) {
      await recordAudit(trx, actor, {
        action: 'notification.acknowledge',
        details: { notification_ids: existing.map((row: { id: number }) => Number(row.id)) },
      })
    }
    return added
  })
}

/**
 * Mails each notice not yet mailed to every active admin other than the one
 * who caused it (the worker's sweep; tests call it in-process). A notice is
 * claimed first (mailed_at set where it was null), so two workers never
 * mail it twice; a failed send gives it back for the next sweep. A crash
 * between claim and send loses the mail, never the notice: it stays on
 * every admin's dashboard until acknowledged.
 */
export async function mailPendingNotifications(batch = 50) {
  const due = await db
    .from('notifications')
    .whereNull('mailed_at')
    .orderBy('id')
    .limit(batch)
    .select('*')
  let mailed = 0
  for (const row of due) {
    const claimed = await db
      .from('notifications')
      .where('id', row.id)
      .whereNull('mailed_at')
      .update({ mailed_at: new Date() })
    if (Number(claimed) !== 1) continue
    const admins = await db
      .from('operators')
      .where('role', 'admin')
      .whereNull('disabled_at')
      .if(row.operator_id !== null, (query) => query.whereNot('id', row.operator_id))
      .select('email')
    const link =
      row.approval_request_id !== null
        ? `${adminConfig.publicUrl}/admin/review/approvals#approval-${row.approval_request_id}`
        : `${adminConfig.publicUrl}/admin/notifications`
    try {
      for (const admin of admins) {
        await sendOperatorMail({
          to: String(admin.email),
          subject:
            row.kind === 'break_glass'
              ? `[THB gateway] break-glass: ${row.action}`
              : row.kind === 'alert'
                ? `[THB gateway] alert: ${row.action}`
                : `[THB gateway] approval requested: ${row.action}`,
          text: `${row.summary}\n\nAt ${new Date(row.created_at).toISOString()} by ${row.actor}.\n\nSee ${link}\n`,
        })
      }
      mailed++
    } catch (error) {
      logger.error(
        { err: error, notification_id: row.id },
        'mailing a notification failed; retried'
      )
      await db.from('notifications').where('id', row.id).update({ mailed_at: null })
    }
  }
  return mailed
}
