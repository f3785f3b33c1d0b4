import vine from '@vinejs/vine'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { reviewSlip } from '#slips/actions/review_slip'

export const rejectSlipsValidator = vine.compile(
  vine.object({
    slip_ids: vine.array(vine.string().trim()).minLength(1),
    /** Each slip's rejection checks them (reviewSlip): a problem is every slip's result. */
    reason_code: vine.any().optional(),
    comment: vine.any().optional(),
  })
)

const MESSAGES = {
  'slip_ids.required': 'Select at least one slip.',
  'slip_ids.array.minLength': 'Select at least one slip.',
}

/** One slip's outcome: rejected, or why not. */
export interface RejectSlipOutcome {
  itemId: string
  ok: boolean
  message: string
}

/**
 * Rejects several flagged slips with one reason code and comment: each slip
 * is reviewSlip on its own (its own transaction and audit row), one after
 * the other. A slip refused (decided meanwhile) is that slip's outcome and
 * the others go on; an error that is no refusal stops the rest.
 */
export async function rejectSlips(
  input: Record<string, unknown>,
  actor: Actor
): Promise<RejectSlipOutcome[]> {
  const data = await validateInput(rejectSlipsValidator, input, MESSAGES)
  const outcomes: RejectSlipOutcome[] = []
  for (const slipId of new Set(data.slip_ids)) {
    try {
      const result = await reviewSlip(
        {
          slip_id: slipId,
          decision: 'reject',
          reason_code: data.reason_code,
          comment: data.comment,
        },
        actor
      )
      outcomes.push({
        itemId: slipId,
        ok: true,
        message: `slip ${slipId}: rejected; order ${result.order.platformOrderId} is ${result.order.status}`,
      })
    } catch (error) {
      if (!(error instanceof ActionError)) throw error
      outcomes.push({
        itemId: slipId,
        ok: false,
        message: error.errors.map((e) => e.message).join(' '),
      })
    }
  }
  return outcomes
}
