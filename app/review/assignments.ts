import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { ReviewQueue } from '#review/queues'

export interface Assignment {
  itemId: string
  operatorId: number
  operatorEmail: string
  assignedAt: Date
}

/** Who holds each of `itemIds` in `queue` (items nobody holds are absent). */
export async function assignmentsOf(
  queue: ReviewQueue,
  itemIds: Array<string | number>
): Promise<Map<string, Assignment>> {
  if (itemIds.length === 0) return new Map()
  const rows = await db
    .from('queue_assignments as a')
    .join('operators as o', 'o.id', 'a.operator_id')
    .where('a.queue', queue)
    .whereIn(
      'a.item_id',
      itemIds.map((id) => String(id))
    )
    .select('a.item_id', 'a.operator_id', 'o.email', 'a.assigned_at')
  return new Map(
    rows.map((row) => [
      String(row.item_id),
      {
        itemId: String(row.item_id),
        operatorId: Number(row.operator_id),
        operatorEmail: String(row.email),
        assignedAt: new Date(row.assigned_at),
      },
    ])
  )
}

/**
 * The ids of the items of `queue` an operator holds ("my items"), for a
 * whereIn on the queue's own query.
 */
export function itemsAssignedTo(queue: ReviewQueue, operatorId: number) {
  return db
    .from('queue_assignments')
    .where('queue', queue)
    .where('operator_id', operatorId)
    .select('item_id')
}

/**
 * A decided item leaves its queue: its assignment goes with it. Called by
 * each deciding action in its own transaction.
 */
export async function clearAssignment(
  trx: TransactionClientContract,
  queue: ReviewQueue,
  itemId: string | number
) {
  await trx
    .from('queue_assignments')
    .where('queue', queue)
    .where('item_id', String(itemId))
    .delete()
}
