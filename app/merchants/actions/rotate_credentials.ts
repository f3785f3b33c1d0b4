import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import gateway from '#config/gateway'
import type Merchant from '#merchants/models/merchant'
import type ApprovalRequest from '#approvals/models/approval_request'
import {
  registerApprovableAction,
  type ApprovalTarget,
  type RunContext,
} from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import {
  currentCredential,
  replaceCredentials,
  storeHandover,
  type Replacement,
} from '#merchants/credentials'
import {
  MAX_GRACE_SECONDS,
  MERCHANT_MESSAGES,
  lockMerchant,
  wholeNumber,
} from '#merchants/merchant_rules'
import { merchantAuthChanged } from '#merchants/merchant_auth_changes'
import { recordAudit, type Reason } from '#core/audit'
import { ActionError, onOff, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import type { DateTime } from 'luxon'
import { inTransaction } from '#core/transaction'

/** Which credentials to rotate and for how long the previous ones keep working. */
export const rotationFields = {
  token: vine.any().use(onOff()).optional(),
  secret: vine.any().use(onOff()).optional(),
  /** Default CREDENTIAL_GRACE_SECONDS; 0 revokes the previous credentials at once (a leak). */
  grace_seconds: wholeNumber([0, MAX_GRACE_SECONDS]).optional(),
  comment: vine.string().trim().maxLength(500).optional(),
}

const schema = vine.object({ merchant_id: vine.string().trim(), ...rotationFields })
export const rotateCredentialsValidator = vine.compile(schema)
export type RotateData = Infer<typeof schema>

export const ROTATE_ACTION = 'merchant.rotate_credentials'
/** Rotating now and scheduling a rotation share it: one credentials change waits per merchant. */
export const CREDENTIALS_KIND = 'credential_rotation'

/** The rotation asked for: at least one of token and secret, and its grace period. */
export function rotationOf(data: { token?: boolean; secret?: boolean; grace_seconds?: number }) {
  if (!data.token && !data.secret) {
    throw ActionError.field('token', 'choose what to rotate: token, secret or both')
  }
  return {
    token: !!data.token,
    secret: !!data.secret,
    graceSeconds: data.grace_seconds ?? gateway.credentialGraceSeconds,
  }
}

/** What a credentials request is about: the merchant, no amount. */
export function merchantTarget(merchant: Merchant): ApprovalTarget {
  return { type: 'merchant', id: merchant.merchantId, amount: null, reviewedBy: null }
}

/** "token and secret", "secret": what a rotation replaces, in words. */
export function rotatedWhat(rotation: { token: boolean; secret: boolean }) {
  return [rotation.token && 'token', rotation.secret && 'secret'].filter(Boolean).join(' and ')
}

/** A grace period as operators read it: "24 h", "90 s", "none (revoked at once)". */
export function graceInWords(seconds: number) {
  if (seconds === 0) return 'none: revoked at once'
  if (seconds % 3600 === 0) return `${seconds / 3600} h`
  if (seconds % 60 === 0) return `${seconds / 60} min`
  return `${seconds} s`
}

export type RotatePrepared = Awaited<ReturnType<typeof prepareRotation>>

/** Locks the merchant and reads its current credential (the base of the rotation). */
export async function prepareRotation(
  trx: TransactionClientContract,
  data: { merchant_id: string }
) {
  const merchant = await lockMerchant(trx, data.merchant_id)
  const current = await currentCredential(merchant.id, trx).catch((error) => {
    throw ActionError.field('merchant_id', error.message)
  })
  return { merchant, current, target: merchantTarget(merchant) }
}

export type RotateResult =
  | {
      outcome: 'approval_requested'
      merchant: Merchant
      request: ApprovalRequest
    }
  | {
      outcome: 'rotated'
      merchant: Merchant
      request: null
      token?: string
      secret?: string
      grace_seconds: number
      previous_valid_until: DateTime
    }

/**
 * Replaces the merchant's token and/or secret. In the back-office it is a
 * maker-checker change: an approval request waits for a second admin and
 * nothing changes until then; on approval the values are kept, encrypted,
 * for one view by the requester (view_credential_handover). From the
 * server's shell it applies at once, as a break-glass use, and returns the
 * new values ONCE to the command (only a hash and a ciphertext are kept).
 * Audited without the values.
 */
export async function rotateCredentials(
  input: Record<string, unknown>,
  actor: Actor
): Promise<RotateResult> {
  const data = await validateInput(rotateCredentialsValidator, input, MERCHANT_MESSAGES)
  const rotation = rotationOf(data)
  return inTransaction(async (trx) => {
    const prepared = await prepareRotation(trx, data)
    const { merchant } = prepared
    const outcome = await askOrApplyFromShell(trx, {
      action: ROTATE_ACTION,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      reason: { comment: data.comment },
      field: 'token',
      summary: `rotated the ${rotatedWhat(rotation)} of merchant ${merchant.merchantId} (grace ${graceInWords(rotation.graceSeconds)})`,
      run: () => carryOutRotation(trx, prepared, data, { actor, request: null }),
    })
    if (outcome.request) {
      return { outcome: 'approval_requested' as const, merchant, request: outcome.request }
    }
    const { replacement } = outcome.result
    return {
      outcome: 'rotated' as const,
      merchant,
      request: null,
      ...replacement.issued,
      grace_seconds: replacement.graceSeconds,
      previous_valid_until: replacement.previousValidUntil,
    }
  })
}

/** The rotation itself (directly or on approval): the new credential, the caches told, the audit row. */
async function carryOutRotation(
  trx: TransactionClientContract,
  prepared: RotatePrepared,
  data: RotateData,
  context: RunContext
) {
  const { merchant } = prepared
  const replacement = await replaceCredentials(trx, merchant, rotationOf(data))
  await merchantAuthChanged(trx, merchant.merchantId)
  const request = context.request
  await auditRotation(
    trx,
    context.actor,
    merchant,
    replacement,
    { comment: data.comment },
    approvalDetails(request) ?? {}
  )
  return { replacement }
}

/**
 * On approval: rotates as stored, and keeps the new values for the
 * requester's one view. The request's result holds facts only, never a value.
 */
async function runApprovedRotation(
  trx: TransactionClientContract,
  prepared: RotatePrepared,
  data: RotateData,
  context: RunContext
) {
  const { replacement } = await carryOutRotation(trx, prepared, data, context)
  const request = context.request!
  const handoverId = await storeHandover(trx, prepared.merchant, replacement, {
    operatorId: request.requestedBy,
    requestedBy: request.requestedByActor,
    approvalRequestId: request.id,
  })
  return rotationFacts(prepared.merchant, replacement, handoverId)
}

/** What a rotation did, without its values: for a request's result and the pages. */
export function rotationFacts(merchant: Merchant, replacement: Replacement, handoverId: number) {
  return {
    merchant_id: merchant.merchantId,
    credential_id: replacement.credential.id,
    token_hint: replacement.credential.tokenHint,
    token_rotated: replacement.issued.token !== undefined,
    secret_rotated: replacement.issued.secret !== undefined,
    grace_seconds: replacement.graceSeconds,
    previous_valid_until: replacement.previousValidUntil.toISO(),
    handover_id: handoverId,
  }
}

/** The audit row of a rotation, now or scheduled: which credential replaced which, never the values. */
export async function auditRotation(
  trx: TransactionClientContract,
  actor: Actor,
  merchant: Merchant,
  { issued, credential, previous, graceSeconds, previousValidUntil }: Replacement,
  reason: Reason,
  details: Record<string, unknown> = {}
) {
  await recordAudit(trx, actor, {
    action: 'merchant.credentials.rotate',
    target: { type: 'merchant', id: merchant.merchantId },
    before: { credential_id: previous.id, token_hint: previous.tokenHint },
    after: { credential_id: credential.id, token_hint: credential.tokenHint },
    reason,
    details: {
      token_rotated: issued.token !== undefined,
      secret_rotated: issued.secret !== undefined,
      grace_seconds: graceSeconds,
      previous_valid_until: previousValidUntil.toISO(),
      ...details,
    },
  })
}

/** The card's before and after: the token's last characters, which secret, the grace. */
export function credentialChange(
  data: { token?: boolean; secret?: boolean; grace_seconds?: number },
  current: { tokenHint: string },
  when: string
) {
  const rotation = rotationOf(data)
  return {
    before: { token: `…${current.tokenHint}`, secret: 'current' },
    after: {
      token: rotation.token ? 'new (shown once to the requester)' : `…${current.tokenHint}`,
      secret: rotation.secret ? 'new (shown once to the requester)' : 'current',
      when,
      previous_work_for: graceInWords(rotation.graceSeconds),
    },
  }
}

/*
 * A second admin approves; the requester sees the new values once, after
 * the approval (a view nobody else can take). Revoking is immediate
 * elsewhere (grace 0 from the shell, cancelling a scheduled rotation).
 */
registerApprovableAction<RotateData, RotatePrepared>({
  name: ROTATE_ACTION,
  kind: CREDENTIALS_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `rotate the ${rotatedWhat(rotationOf(data))} of merchant ${data.merchant_id} now`,
  change: (data, prepared) => credentialChange(data, prepared.current, 'on approval'),
  validate: (input) => validateInput(rotateCredentialsValidator, input, MERCHANT_MESSAGES),
  prepare: (trx, data) => prepareRotation(trx, data),
  run: (trx, prepared, data, context) => runApprovedRotation(trx, prepared, data, context),
})
