import db from '@adonisjs/lucid/services/db'
import { assignmentsOf, itemsAssignedTo } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'

export interface QueueFilter {
  page: number
  perPage: number
  /** Only the items this operator holds ("my items"). */
  mineOf: number | null
}

/**
 * When the order was frozen: its latest event into freeze from another
 * status (order_events' (order_type, order_id, id) index, one order each).
 */
const FROZEN_AT = db.raw(
  `(SELECT MAX(e.created_at) FROM order_events e
     WHERE e.order_type = 'payment' AND e.order_id = payment_orders.id
       AND e.to_status = 'freeze' AND (e.from_status IS NULL OR e.from_status <> 'freeze')) AS frozen_at`
)

/**
 * Frozen payment orders, the longest held first. Frozen orders are few
 * (payment_orders' (status, expire_at) index finds them); the page's freeze
 * reasons and holders are read for its rows only.
 */
export async function frozenQueue(filter: QueueFilter) {
  const query = db
    .from('payment_orders')
    .join('merchants', 'merchants.id', 'payment_orders.merchant_id')
    .where('payment_orders.status', 'freeze')
    .select(
      'payment_orders.id',
      'payment_orders.platform_order_id',
      'payment_orders.merchant_order_id',
      'payment_orders.amount',
      'payment_orders.status_before_freeze',
      'payment_orders.awaiting_review',
      'payment_orders.expire_at',
      'payment_orders.updated_at',
      'merchants.merchant_id',
      FROZEN_AT
    )
    .orderByRaw('COALESCE(frozen_at, payment_orders.updated_at) ASC')
    .orderBy('payment_orders.id', 'asc')
  if (filter.mineOf !== null) {
    query.whereIn('payment_orders.platform_order_id', itemsAssignedTo('frozen', filter.mineOf))
  }
  const page = await query.paginate(filter.page, filter.perPage)
  const rows = page.all()
  const ids = rows.map((row) => String(row.platform_order_id))
  const holders = await assignmentsOf('frozen', ids)
  const reasons = await freezeReasons(rows.map((row) => Number(row.id)))
  return {
    page,
    rows: rows.map((row) => {
      const since = new Date(row.frozen_at ?? row.updated_at)
      const holder = holders.get(String(row.platform_order_id)) ?? null
      return {
        item_id: String(row.platform_order_id),
        platform_order_id: String(row.platform_order_id),
        merchant_order_id: String(row.merchant_order_id),
        merchant_id: String(row.merchant_id),
        amount: formatThb(Number(row.amount)),
        frozen_from: row.status_before_freeze as string | null,
        awaiting_review: Boolean(row.awaiting_review),
        expire_at: formatGatewayDateTime(new Date(row.expire_at)),
        frozen_at: formatGatewayDateTime(since),
        age: ageLabel(since),
        age_class: ageClass(since),
        reason: reasons.get(Number(row.id)) ?? null,
        holder: holder?.operatorEmail ?? null,
        holder_id: holder?.operatorId ?? null,
      }
    }),
  }
}

/** The reason of each order's latest freeze event ("frozen (code): comment"). */
async function freezeReasons(orderIds: number[]) {
  if (orderIds.length === 0) return new Map<number, string>()
  const rows = await db
    .from('order_events')
    .where('order_type', 'payment')
    .whereIn('order_id', orderIds)
    .where('to_status', 'freeze')
    .whereNot('from_status', 'freeze')
    .orderBy('id', 'asc')
    .select('order_id', 'reason')
  const reasons = new Map<number, string>()
  for (const row of rows) reasons.set(Number(row.order_id), String(row.reason ?? ''))
  return reasons
}

/** How many orders are frozen (the tab's count). */
export async function frozenCount() {
  const row = await db.from('payment_orders').where('status', 'freeze').count('* as total').first()
  return Number(row?.total ?? 0)
}
