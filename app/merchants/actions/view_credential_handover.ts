import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import encryption from '@adonisjs/core/services/encryption'
import type Merchant from '#merchants/models/merchant'
import { lockMerchant } from '#merchants/merchant_rules'
import { actsInBackOffice } from '#approvals/maker_checker'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import { atWhen, byWhom } from '#core/already_done'
import { formatGatewayDateTime } from '#core/clock'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const viewCredentialHandoverValidator = vine.compile(
  vine.object({
    merchant_id: vine.string().trim(),
    /** The handover (the merchant page's button), or the scheduled rotation that made it (the shell). */
    handover_id: vine
      .number()
      .withoutDecimals()
      .positive()
      .optional()
      .requiredIfMissing('rotation_id'),
    rotation_id: vine.number().withoutDecimals().positive().optional(),
  })
)

const MESSAGES = {
  'handover_id.required': 'name the handover (or the scheduled rotation) to view',
}

interface HandoverRow {
  id: number
  merchant_id: number
  credential_id: number
  operator_id: number | null
  requested_by: string
  approval_request_id: number | null
  rotation_id: number | null
  token_encrypted: string | null
  secret_encrypted: string | null
  token_rotated: number | boolean
  secret_rotated: number | boolean
  previous_valid_until: Date | null
  viewed_at: Date | null
  viewed_by: string | null
  created_at: Date
}

/**
 * The new token and/or secret of an approved rotation, shown ONCE, to the
 * operator who asked for it (one scheduled from the server's shell: to the
 * shell). In one transaction the handover is locked, its owner checked, the
 * values decrypted and cleared, and the view recorded (when, by whom): a
 * second view, or a view by anyone else, is refused and names who saw them.
 * Audited without the values. Nobody can read a live secret back otherwise.
 */
export async function viewCredentialHandover(input: Record<string, unknown>, actor: Actor) {
  const data = await validateInput(viewCredentialHandoverValidator, input, MESSAGES)
  return inTransaction(async (trx) => {
    const merchant = await lockMerchant(trx, data.merchant_id, { forUpdate: false })
    const query = trx.from('credential_handovers').where('merchant_id', merchant.id)
    if (data.handover_id !== undefined) query.where('id', data.handover_id)
    else query.where('rotation_id', data.rotation_id!)
    const row = (await query.forUpdate().first()) as HandoverRow | null
    const field = data.handover_id !== undefined ? 'handover_id' : 'rotation_id'
    if (!row) {
      throw ActionError.notFound(
        field,
        data.handover_id !== undefined
          ? `no new credentials #${data.handover_id} of merchant ${merchant.merchantId}`
          : `rotation ${data.rotation_id} of merchant ${merchant.merchantId} has no new values (not run yet, or none)`
      )
    }
    const owner = row.operator_id === null ? 'the server shell' : row.requested_by
    const mine = actsInBackOffice(actor)
      ? row.operator_id !== null && row.operator_id === actor.operatorId
      : row.operator_id === null
    if (!mine) {
      throw ActionError.field(
        field,
        `the new credentials of ${merchant.merchantId} are shown only to whoever asked for the rotation (${owner.replace(/^operator:/, '')}), once`
      )
    }
    if (row.viewed_at !== null || (row.token_encrypted === null && row.secret_encrypted === null)) {
      throw ActionError.field(
        field,
        `the new credentials of ${merchant.merchantId} were already shown, to ${byWhom(row.viewed_by, actor)} at ${atWhen(row.viewed_at)}; they are never shown again: rotate again if they are lost`
      )
    }
    const values = {
      ...(row.token_encrypted ? { token: decrypt(row.token_encrypted, row.id) } : {}),
      ...(row.secret_encrypted ? { secret: decrypt(row.secret_encrypted, row.id) } : {}),
    }
    const cleared = await trx
      .from('credential_handovers')
      .where('id', row.id)
      .whereNull('viewed_at')
      .update({
        token_encrypted: null,
        secret_encrypted: null,
        viewed_at: new Date(),
        viewed_by: actor.name.slice(0, 120),
      })
    if (Number(cleared) !== 1) {
      throw ActionError.field(
        field,
        `the new credentials of ${merchant.merchantId} were already shown`
      )
    }
    await recordAudit(trx, actor, {
      action: 'merchant.credentials.handover',
      target: { type: 'merchant', id: merchant.merchantId },
      details: {
        handover_id: row.id,
        credential_id: row.credential_id,
        approval_request_id: row.approval_request_id,
        rotation_id: row.rotation_id,
        shown: Object.keys(values),
      },
    })
    return {
      merchant,
      handoverId: row.id,
      previousValidUntil: row.previous_valid_until,
      ...values,
    }
  })
}

/** A merchant's handovers not viewed yet, for its page (never the values). */
export async function waitingHandovers(merchant: Pick<Merchant, 'id'>) {
  const rows = (await db
    .from('credential_handovers')
    .where('merchant_id', merchant.id)
    .whereNull('viewed_at')
    .orderBy('id')) as HandoverRow[]
  return rows.map((row) => ({
    id: row.id,
    operator_id: row.operator_id,
    requested_by:
      row.operator_id === null ? 'the server shell' : row.requested_by.replace(/^operator:/, ''),
    approval_request_id: row.approval_request_id,
    rotation_id: row.rotation_id,
    what: [Boolean(row.token_rotated) && 'token', Boolean(row.secret_rotated) && 'secret']
      .filter(Boolean)
      .join(' and '),
    previous_valid_until: formatGatewayDateTime(row.previous_valid_until),
  }))
}

function decrypt(ciphertext: string, handoverId: number) {
  const value = encryption.decrypt<string>(ciphertext)
  if (typeof value !== 'string') {
    // Wrong APP_KEY or a damaged row: say so rather than hand out nothing.
    throw ActionError.general(
      `the new credentials #${handoverId} cannot be decrypted with the current APP_KEY`
    )
  }
  return value
}
