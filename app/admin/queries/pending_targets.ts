import db from '@adonisjs/lucid/services/db'

/**
 * The live approval requests on targets of these types, oldest first: a
 * target asked for (a new account, a new layout) may have no row of its own
 * yet, so the lists find what waits through the requests themselves.
 */
export async function liveRequestTargets(targetTypes: readonly string[]) {
  const rows = await db
    .from('approval_requests')
    .whereIn('target_type', [...targetTypes])
    .where('status', 'pending')
    .where('expires_at', '>', new Date())
    .orderBy('id')
    .select('id', 'target_type', 'target_id', 'action')
  return rows.map((row) => ({
    id: Number(row.id),
    targetType: String(row.target_type),
    targetId: String(row.target_id),
    action: String(row.action),
  }))
}
