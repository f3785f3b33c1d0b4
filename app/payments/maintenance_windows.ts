import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import db from '@adonisjs/lucid/services/db'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { GATEWAY_ZONE, formatGatewayDateTime } from '#core/clock'

/**
 * Maintenance windows of the deposit-account pool: from `from` to `to`, one
 * account or every account of a bank is out of selection. No job starts or
 * ends them: selection compares the window's times with the clock.
 */

/**
 * The windows in effect at `now` for the deposit_accounts row of the outer
 * query, as a subquery: `.whereNotExists(windowsInEffect(now))`.
 */
export function windowsInEffect(now: DateTime) {
  const at = now.toJSDate()
  return db
    .from('deposit_maintenance_windows')
    .whereNull('cancelled_at')
    .where('starts_at', '<=', at)
    .where('ends_at', '>', at)
    .where((owner) =>
      owner
        .whereColumn('deposit_maintenance_windows.deposit_account_id', 'deposit_accounts.id')
        .orWhereColumn('deposit_maintenance_windows.bank', 'deposit_accounts.bank')
    )
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$/
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/

/**
 * A time as an operator types it: "2026-11-23 01:30" in Bangkok time (GMT+7,
 * like every *_datetime of the gateway), an ISO 8601 time with its offset, or
 * "now"; becomes a UTC DateTime.
 */
export const gatewayTime = vine.createRule((value, _options, field: FieldContext) => {
  const text = String(value).trim()
  let time: DateTime | null = null
  if (value instanceof Date) time = DateTime.fromJSDate(value)
  else if (DateTime.isDateTime(value)) time = value
  else if (text.toLowerCase() === 'now') time = DateTime.utc()
  else if (LOCAL_TIME.test(text))
    time = DateTime.fromISO(text.replace(' ', 'T'), { zone: GATEWAY_ZONE })
  else if (ISO_WITH_OFFSET.test(text)) time = DateTime.fromISO(text, { setZone: true })
  if (!time?.isValid) {
    return field.report(
      `${field.name} must be a Bangkok time such as 2026-11-23 01:30 (GMT+7), an ISO 8601 time with its offset, or "now"`,
      'gateway_time',
      field
    )
  }
  field.mutate(time.toUTC(), field)
})

/** The window as the audit log shows it; times in Bangkok time. */
export function maintenanceWindowSnapshot(window: MaintenanceWindow) {
  return {
    deposit_account_id: window.depositAccountId,
    bank: window.bank,
    from: formatGatewayDateTime(window.startsAt),
    to: formatGatewayDateTime(window.endsAt),
    reason: window.reason,
    cancelled_at: formatGatewayDateTime(window.cancelledAt ?? null),
  }
}

export type MaintenanceStatus = 'scheduled' | 'in_effect' | 'ended' | 'cancelled'

export function maintenanceStatus(window: MaintenanceWindow, now = DateTime.utc()) {
  if (window.cancelledAt) return 'cancelled'
  if (window.endsAt <= now) return 'ended'
  return window.startsAt <= now ? 'in_effect' : 'scheduled'
}

/** The window as `deposit-account:maintenance --json` and the pool screens show it. */
export function presentMaintenanceWindow(window: MaintenanceWindow, now = DateTime.utc()) {
  return {
    id: window.id,
    ...maintenanceWindowSnapshot(window),
    status: maintenanceStatus(window, now),
    created_by: window.createdBy,
    cancelled_by: window.cancelledBy,
  }
}

/**
 * Windows in effect or still to come, soonest first; with `all`, the most
 * recent `limit` windows whatever their state.
 */
export async function listMaintenanceWindows(
  filter: { all?: boolean; limit?: number } = {},
  now = DateTime.utc()
) {
  if (filter.all) {
    return MaintenanceWindow.query()
      .orderBy('starts_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100)
  }
  return MaintenanceWindow.query()
    .whereNull('cancelled_at')
    .where('ends_at', '>', now.toJSDate())
    .orderBy('starts_at')
    .orderBy('id')
}
