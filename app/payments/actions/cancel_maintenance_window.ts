import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { maintenanceWindowSnapshot } from '#payments/maintenance_windows'
import { changedValues, recordAudit } from '#core/audit'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const cancelMaintenanceWindowValidator = vine.compile(
  vine.object({
    id: vine.number().withoutDecimals().min(1),
    comment: vine.string().trim().maxLength(500).optional(),
  })
)

const MESSAGES = {
  'id.required': 'id is required: the maintenance window to cancel',
  'id.number': 'id must be a maintenance window id (a positive whole number)',
  'id.withoutDecimals': 'id must be a maintenance window id (a positive whole number)',
  'id.min': 'id must be a maintenance window id (a positive whole number)',
}

/**
 * Cancels a maintenance window that has not ended: its accounts are back in
 * selection at once (or it never starts). Audited.
 */
export async function cancelMaintenanceWindow(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(cancelMaintenanceWindowValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const window = await MaintenanceWindow.query({ client: trx })
      .where('id', data.id)
      .forUpdate()
      .first()
    if (!window) throw ActionError.notFound('id', `no maintenance window with id ${data.id}`)
    const now = DateTime.utc()
    if (window.cancelledAt) {
      throw ActionError.field('id', `maintenance window ${window.id} is already cancelled`)
    }
    if (window.endsAt <= now) {
      throw ActionError.field(
        'id',
        `maintenance window ${window.id} already ended at ${formatGatewayDateTime(window.endsAt)} (GMT+7)`
      )
    }

    const before = maintenanceWindowSnapshot(window)
    window.merge({ cancelledAt: now, cancelledBy: actor.name })
    await window.useTransaction(trx).save()
    const diff = changedValues(before, maintenanceWindowSnapshot(window))
    await recordAudit(trx, actor, {
      action: 'maintenance_window.cancel',
      target: { type: 'maintenance_window', id: String(window.id) },
      before: diff.before,
      after: diff.after,
      reason: { comment: data.comment },
    })
    return window
  })
}
