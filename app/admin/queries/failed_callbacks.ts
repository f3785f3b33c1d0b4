import db from '@adonisjs/lucid/services/db'
import { assignmentsOf, itemsAssignedTo } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import { formatGatewayDateTime } from '#core/clock'

export interface FailedCallbacksFilter {
  page: number
  perPage: number
  /** Only the orders this operator holds ("my items"). */
  mineOf: number | null
}

/**
 * Callbacks given up after their attempts (state failed), the oldest first:
 * callback_outbox's (state, created_at) index serves the filter and the order.
 * An order can have more than one row (a payment's PAID and, earlier, none
 * other today); each row is listed, and resending acts on the order.
 */
export async function failedCallbacks(filter: FailedCallbacksFilter) {
  const query = db
    .from('callback_outbox as c')
    .join('merchants as m', 'm.id', 'c.merchant_id')
    .where('c.state', 'failed')
    .select(
      'c.id',
      'c.platform_order_id',
      'c.order_type',
      'c.status',
      'c.notify_url',
      'c.attempts',
      'c.series',
      'c.created_at',
      'c.last_attempt_at',
      'c.last_http_status',
      'c.last_error',
      'm.merchant_id'
    )
    .orderBy('c.created_at', 'asc')
    .orderBy('c.id', 'asc')
  if (filter.mineOf !== null) {
    query.whereIn('c.platform_order_id', itemsAssignedTo('callbacks', filter.mineOf))
  }
  const page = await query.paginate(filter.page, filter.perPage)
  const rows = page.all()
  const holders = await assignmentsOf(
    'callbacks',
    rows.map((row) => String(row.platform_order_id))
  )
  return {
    page,
    rows: rows.map((row) => {
      // Waiting since the last attempt gave up (or since the row was written).
      const since = new Date(row.last_attempt_at ?? row.created_at)
      const holder = holders.get(String(row.platform_order_id)) ?? null
      return {
        item_id: String(row.platform_order_id),
        platform_order_id: String(row.platform_order_id),
        order_type: String(row.order_type),
        status: String(row.status),
        merchant_id: String(row.merchant_id),
        notify_url: String(row.notify_url),
        attempts: Number(row.attempts),
        series: Number(row.series),
        last_http_status: row.last_http_status === null ? null : Number(row.last_http_status),
        last_error: row.last_error as string | null,
        failed_at: formatGatewayDateTime(since),
        age: ageLabel(since),
        age_class: ageClass(since),
        holder: holder?.operatorEmail ?? null,
      }
    }),
  }
}

/** How many callbacks wait in the queue (for its tab). */
export async function failedCallbackCount() {
  const [row] = await db.from('callback_outbox').where('state', 'failed').count('* as total')
  return Number(row?.total ?? 0)
}
