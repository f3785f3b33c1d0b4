import vine from '@vinejs/vine'
import { approvalDetails } from '#approvals/approval_requests'
import type { Infer } from '@vinejs/vine/types'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import logger from '@adonisjs/core/services/logger'
import type Merchant from '#merchants/models/merchant'
import type ApprovalRequest from '#approvals/models/approval_request'
import ScheduledCredentialRotation from '#merchants/models/scheduled_credential_rotation'
import { registerApprovableAction, type RunContext } from '#approvals/approvable_actions'
import { askOrApplyFromShell } from '#approvals/maker_checker'
import { MERCHANT_MESSAGES } from '#merchants/merchant_rules'
import { futureTime, rotationSnapshot } from '#merchants/rotation_rules'
import {
  CREDENTIALS_KIND,
  credentialChange,
  graceInWords,
  prepareRotation,
  rotatedWhat,
  rotationFields,
  rotationOf,
  type RotatePrepared,
} from '#merchants/actions/rotate_credentials'
import { recordAudit } from '#core/audit'
import { dispatch } from '#core/queue/queue_manager'
import { validateInput } from '#core/validation'
import { formatGatewayDateTime } from '#core/clock'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

const schema = vine.object({
  merchant_id: vine.string().trim(),
  /** When the worker rotates: an ISO 8601 time in the future. */
  run_at: vine.any().use(futureTime()),
  ...rotationFields,
})
export const scheduleCredentialRotationValidator = vine.compile(schema)
export type ScheduleData = Infer<typeof schema>

export const SCHEDULE_ACTION = 'merchant.schedule_rotation'

export type ScheduleResult =
  | { outcome: 'approval_requested'; merchant: Merchant; request: ApprovalRequest }
  | {
      outcome: 'scheduled'
      merchant: Merchant
      request: null
      rotation: ScheduledCredentialRotation
    }

/**
 * Schedules a rotation of the merchant's token and/or secret for `run_at`.
 * In the back-office it waits for a second admin (an approval request; the
 * rotation is scheduled when approved, and its run_at must still be ahead
 * then); from the server's shell it is scheduled at once, as a break-glass
 * use. The worker carries it out (perform_scheduled_rotation) and keeps the
 * new values, encrypted, for one view by whoever asked for it. Audited.
 */
export async function scheduleCredentialRotation(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ScheduleResult> {
  const data = await validateInput(scheduleCredentialRotationValidator, input, MERCHANT_MESSAGES)
  const rotation = rotationOf(data)
  const scheduled = await inTransaction(async (trx) => {
    const prepared = await prepareRotation(trx, data)
    const { merchant } = prepared
    const outcome = await askOrApplyFromShell(trx, {
      action: SCHEDULE_ACTION,
      target: prepared.target,
      input: data,
      prepared,
      actor,
      reason: { comment: data.comment },
      field: 'run_at',
      summary: `scheduled a rotation of the ${rotatedWhat(rotation)} of merchant ${merchant.merchantId} for ${formatGatewayDateTime(data.run_at)} GMT+7 (grace ${graceInWords(rotation.graceSeconds)})`,
      run: () => createRotation(trx, prepared, data, { actor, request: null }),
    })
    if (outcome.request) {
      return { outcome: 'approval_requested' as const, merchant, request: outcome.request }
    }
    return {
      outcome: 'scheduled' as const,
      merchant,
      request: null,
      rotation: outcome.result,
    }
  })
  if (scheduled.outcome === 'scheduled') await enqueueRotation(scheduled.rotation)
  return scheduled
}

/**
 * The rotation row (directly or on approval), audited. On approval the
 * requester owns it: the worker keeps its new values for their one view.
 */
async function createRotation(
  trx: TransactionClientContract,
  prepared: RotatePrepared,
  data: ScheduleData,
  context: RunContext
) {
  const rotation = rotationOf(data)
  const { actor, request } = context
  const row = await ScheduledCredentialRotation.create(
    {
      merchantId: prepared.merchant.id,
      rotateToken: rotation.token,
      rotateSecret: rotation.secret,
      graceSeconds: rotation.graceSeconds,
      runAt: data.run_at,
      status: 'scheduled',
      requestedBy: request ? request.requestedByActor : actor.name,
      requestedByOperatorId: request ? request.requestedBy : (actor.operatorId ?? null),
      comment: data.comment ?? null,
    },
    { client: trx }
  )
  await recordAudit(trx, actor, {
    action: 'merchant.credentials.schedule_rotation',
    target: { type: 'merchant', id: prepared.merchant.merchantId },
    after: rotationSnapshot(row),
    reason: { comment: data.comment },
    details: approvalDetails(request),
  })
  return row
}

/**
 * A delayed job that runs the rotation at its run_at (job id from the
 * rotation row: adding it twice is harmless). If Redis is unreachable the
 * rotation still runs: the credentials sweep performs due rotations.
 */
export async function enqueueRotation(rotation: ScheduledCredentialRotation) {
  try {
    await dispatch(
      'performCredentialRotation',
      { rotationId: rotation.id },
      {
        delay: Math.max(0, rotation.runAt.toMillis() - Date.now()),
        // The creation time makes the id unique even where row ids are
        // reused (a restored or reset database) and completed jobs remain.
        jobId: `rotation-${rotation.id}-${rotation.createdAt.toUnixInteger()}`,
      }
    )
  } catch (error) {
    logger.warn(
      { err: error, rotation_id: rotation.id },
      'rotation job not added; the credentials sweep will perform it'
    )
  }
}

/*
 * Scheduling waits for a second admin like rotating now (same kind: one
 * credentials change waits per merchant). Cancelling stays immediate.
 */
registerApprovableAction<ScheduleData, RotatePrepared>({
  name: SCHEDULE_ACTION,
  kind: CREDENTIALS_KIND,
  approverRole: 'admin',
  sensitive: true,
  describe: (data) =>
    `schedule a rotation of the ${rotatedWhat(rotationOf(data))} of merchant ${data.merchant_id} for ${formatGatewayDateTime(data.run_at)} GMT+7`,
  change: (data, prepared) =>
    credentialChange(data, prepared.current, `${formatGatewayDateTime(data.run_at)} GMT+7`),
  validate: (input) => validateInput(scheduleCredentialRotationValidator, input, MERCHANT_MESSAGES),
  prepare: (trx, data) => prepareRotation(trx, data),
  run: async (trx, prepared, data, context) => {
    const row = await createRotation(trx, prepared, data, context)
    // After the approval commits: the job must find the row.
    trx.after('commit', () => enqueueRotation(row))
    return { rotation_id: row.id, run_at: row.runAt.toISO() }
  },
})
