import vine from '@vinejs/vine'
import { decisionComment } from '#payments/payment_rules'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { resendCallback, RESEND_REASON_CODES } from '#callbacks/actions/resend_callback'

export const resendCallbacksValidator = vine.compile(
  vine.object({
    platform_order_ids: vine.array(vine.string().trim()).minLength(1),
    reason_code: vine.enum(RESEND_REASON_CODES).optional(),
    /** Sending many again is an operator's decision: it says why. */
    comment: decisionComment(),
  })
)

const COMMENT_REQUIRED = 'A comment is required: say why the callbacks are sent again.'

const MESSAGES = {
  'platform_order_ids.required': 'Tick at least one callback to resend.',
  'platform_order_ids.array.minLength': 'Tick at least one callback to resend.',
  'comment.required': COMMENT_REQUIRED,
  'comment.minLength': COMMENT_REQUIRED,
}

/** One order's outcome: resent, or why not. */
export interface ResendOutcome {
  itemId: string
  ok: boolean
  message: string
}

/**
 * Resends the callbacks of several orders with one reason: each order is
 * resendCallback on its own (its own transaction, audit row and new series),
 * one after the other. An order refused (no callback) is that order's
 * outcome and the others go on; an error that is no refusal stops the rest.
 */
export async function resendCallbacks(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ResendOutcome[]> {
  const data = await validateInput(resendCallbacksValidator, input, MESSAGES)
  const outcomes: ResendOutcome[] = []
  for (const platformOrderId of new Set(data.platform_order_ids)) {
    try {
      const resent = await resendCallback(
        {
          platform_order_id: platformOrderId,
          reason_code: data.reason_code,
          comment: data.comment,
        },
        actor
      )
      const series = resent.map((row) => `${row.status}, series ${row.series}`).join('; ')
      outcomes.push({
        itemId: platformOrderId,
        ok: true,
        message: `${platformOrderId}: resent (${series})`,
      })
    } catch (error) {
      if (!(error instanceof ActionError)) throw error
      outcomes.push({
        itemId: platformOrderId,
        ok: false,
        message: error.errors.map((e) => e.message).join(' '),
      })
    }
  }
  return outcomes
}
