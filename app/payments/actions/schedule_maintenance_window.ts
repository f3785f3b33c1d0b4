import { DateTime } from 'luxon'
import vine from '@vinejs/vine'
import DepositAccount from '#payments/models/deposit_account'
import MaintenanceWindow from '#payments/models/maintenance_window'
import { bankCode } from '#payments/deposit_account_input'
import { gatewayTime, maintenanceWindowSnapshot } from '#payments/maintenance_windows'
import { recordAudit } from '#core/audit'
import { formatGatewayDateTime } from '#core/clock'
import { ActionError, validateInput, type FieldError } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const scheduleMaintenanceWindowValidator = vine.compile(
  vine.object({
    /** One account out of selection... */
    deposit_account_id: vine.number().withoutDecimals().min(1).optional(),
    /** ...or every account of a bank. */
    bank: vine.any().use(bankCode()).optional(),
    /** Default: now. */
    from: vine.any().use(gatewayTime()).optional(),
    to: vine.any().use(gatewayTime()),
    reason: vine.string().trim().minLength(1).maxLength(255),
  })
)

const MESSAGES = {
  'deposit_account_id.number': 'deposit_account_id must be a deposit account id',
  'deposit_account_id.withoutDecimals': 'deposit_account_id must be a deposit account id',
  'deposit_account_id.min': 'deposit_account_id must be a deposit account id',
  'reason.required': 'reason is required: say why the accounts are out (kept with the window)',
}

/**
 * Takes one deposit account (deposit_account_id) or every account of a bank
 * (bank) out of selection from `from` (default now) to `to`; they come back
 * by themselves when `to` passes. Open orders on them stay valid. Audited.
 */
export async function scheduleMaintenanceWindow(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(scheduleMaintenanceWindowValidator, input, MESSAGES)
  const now = DateTime.utc()
  const from: DateTime = data.from ?? now
  const to: DateTime = data.to
  const errors: FieldError[] = []
  if (data.deposit_account_id === undefined && data.bank === undefined) {
    errors.push({
      field: 'deposit_account_id',
      message: 'give deposit_account_id (one account) or bank (every account of a bank)',
    })
  } else if (data.deposit_account_id !== undefined && data.bank !== undefined) {
    errors.push({ field: 'bank', message: 'give deposit_account_id or bank, not both' })
  }
  if (to <= from) {
    errors.push({
      field: 'to',
      message: `to must be after from (${formatGatewayDateTime(from)} GMT+7)`,
    })
  } else if (to <= now) {
    errors.push({ field: 'to', message: 'to is in the past: the window would take nothing out' })
  }
  if (errors.length > 0) throw new ActionError(errors)

  return inTransaction(async (trx) => {
    if (data.deposit_account_id !== undefined) {
      const account = await DepositAccount.find(data.deposit_account_id, { client: trx })
      if (!account) {
        throw ActionError.notFound(
          'deposit_account_id',
          `no deposit account with id ${data.deposit_account_id}`
        )
      }
    }
    const window = await MaintenanceWindow.create(
      {
        depositAccountId: data.deposit_account_id ?? null,
        bank: data.bank ?? null,
        startsAt: from,
        endsAt: to,
        reason: data.reason,
        createdBy: actor.name,
      },
      { client: trx }
    )
    await recordAudit(trx, actor, {
      action: 'maintenance_window.schedule',
      target: { type: 'maintenance_window', id: String(window.id) },
      after: maintenanceWindowSnapshot(window),
      reason: { comment: data.reason },
    })
    return window
  })
}
