import vine from '@vinejs/vine'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import {
  authFailureCounters,
  authFailureStore,
  kindLabel,
  parseBlockSubject,
  type AuthFailureCounter,
} from '#merchant_api/auth_failure_blocks'
import { inTransaction } from '#core/transaction'

/** What a block is counted for: an IP address (IPv4 or IPv6) or a merchant_id. */
const blockSubject = vine.createRule((value, _options, field) => {
  if (typeof value === 'string' && parseBlockSubject(value)) return
  field.report(
    'subject must be an IP address (IPv4 or IPv6) or a merchant_id',
    'block_subject',
    field
  )
})

export const clearAuthFailureBlockValidator = vine.compile(
  vine.object({
    subject: vine
      .string()
      .trim()
      .maxLength(64)
      .use(blockSubject())
      /** Its kind and canonical form (an IPv4-mapped address as IPv4). */
      .transform((value) => parseBlockSubject(value)!),
    comment: vine.string().trim().maxLength(1000).optional(),
  })
)

export interface ClearedBlock {
  kind: AuthFailureCounter['kind']
  subject: string
  /** The counters deleted (one per limit setting in use, usually one). */
  cleared: AuthFailureCounter[]
  wasBlocked: boolean
}

/**
 * Lifts the failed-authentication block of an address or a merchant_id: its
 * counters are deleted from Redis, so its next failure starts from 0. The
 * audit row (failures and time left before) is written in a transaction that
 * commits only once the keys are deleted: no row for a clear that did not
 * happen. Web processes counting in memory while Redis was away keep their
 * own counts until those expire.
 */
export async function clearAuthFailureBlock(
  input: Record<string, unknown>,
  actor: Actor
): Promise<ClearedBlock> {
  const data = await validateInput(clearAuthFailureBlockValidator, input)
  const parsed = data.subject
  const redis = await authFailureStore()
  if (!redis) {
    throw ActionError.general('Redis is not reachable: the blocks cannot be read or cleared now')
  }
  const { counters } = await authFailureCounters(redis)
  const cleared = counters.filter(
    (counter) => counter.kind === parsed.kind && counter.subject === parsed.subject
  )
  if (cleared.length === 0) {
    throw ActionError.notFound(
      'subject',
      `No failed authentication is counted for ${kindLabel(parsed.kind)} ${parsed.subject}: nothing to clear`
    )
  }
  const wasBlocked = cleared.some((counter) => counter.blocked)
  await inTransaction(async (trx) => {
    await recordAudit(trx, actor, {
      action: 'api_block.clear',
      target: { type: parsed.kind === 'ip' ? 'ip_address' : 'merchant', id: parsed.subject },
      before: {
        failures: Math.max(...cleared.map((counter) => counter.failures)),
        blocked: wasBlocked,
        seconds_left: Math.max(...cleared.map((counter) => counter.secondsLeft)),
      },
      after: { failures: 0, blocked: false, seconds_left: 0 },
      reason: { comment: data.comment ?? null },
      details: { keys: cleared.map((counter) => counter.key) },
    })
    await redis.del(...cleared.map((counter) => counter.key))
  })
  return { ...parsed, cleared, wasBlocked }
}
