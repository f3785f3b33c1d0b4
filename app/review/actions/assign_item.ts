import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import { reviewQueue, reviewQueueNames } from '#review/queues'
import { recordAudit } from '#core/audit'
import { ActionError, validateInput } from '#core/validation'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'

export const assignItemValidator = vine.compile(
  vine.object({
    queue: vine.enum(() => reviewQueueNames()),
    item_ids: vine
      .array(vine.string().trim().minLength(1).maxLength(64))
      .minLength(1)
      .maxLength(200),
    /** The operator who takes the items; null gives them back to the queue. */
    operator_id: vine.number().withoutDecimals().min(1).nullable(),
  })
)

const messages = () => ({
  'queue.enum': `queue must be one of ${reviewQueueNames().join(', ')}`,
  'item_ids.minLength': 'select at least one item',
})

export interface AssignResult {
  itemId: string
  ok: boolean
  message: string
}

/**
 * Assigns queue items to an operator ("my items"), or gives them back
 * (operator_id null). An item held by someone else moves to the new holder;
 * the audit row keeps who held it. One result per item: an unknown item is
 * reported, the others still move.
 */
export async function assignItems(
  input: Record<string, unknown>,
  actor: Actor
): Promise<AssignResult[]> {
  const data = await validateInput(assignItemValidator, input, messages())
  if (data.operator_id !== null) {
    const operator = await db
      .from('operators')
      .where('id', data.operator_id)
      .whereNull('disabled_at')
      .first()
    if (!operator) throw ActionError.field('operator_id', 'no active operator has this id')
  }
  const { table, column } = reviewQueue(data.queue).items
  const results: AssignResult[] = []
  for (const itemId of [...new Set(data.item_ids)]) {
    results.push(
      await inTransaction(async (trx) => {
        const item = await trx.from(table).where(column, itemId).select(column).first()
        if (!item) return { itemId, ok: false, message: `${itemId}: not found` }
        const held = await trx
          .from('queue_assignments')
          .where('queue', data.queue)
          .where('item_id', itemId)
          .forUpdate()
          .first()
        const before = held ? Number(held.operator_id) : null
        if (before === data.operator_id) {
          return { itemId, ok: true, message: `${itemId}: unchanged` }
        }
        if (held) {
          await trx.from('queue_assignments').where('id', held.id).delete()
        }
        if (data.operator_id !== null) {
          await trx.table('queue_assignments').insert({
            queue: data.queue,
            item_id: itemId,
            operator_id: data.operator_id,
            assigned_at: new Date(),
          })
        }
        await recordAudit(trx, actor, {
          action: data.operator_id === null ? 'queue.unassign' : 'queue.assign',
          target: { type: `queue:${data.queue}`, id: itemId },
          before: { operator_id: before },
          after: { operator_id: data.operator_id },
        })
        return {
          itemId,
          ok: true,
          message:
            data.operator_id === null ? `${itemId}: back in the queue` : `${itemId}: assigned`,
        }
      })
    )
  }
  return results
}
