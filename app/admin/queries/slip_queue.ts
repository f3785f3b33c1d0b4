import db from '@adonisjs/lucid/services/db'
import { assignmentsOf, itemsAssignedTo } from '#review/assignments'
import { ageClass, ageLabel } from '#review/queues'
import type { QueueFilter } from '#admin/queries/frozen_queue'
import { formatGatewayDateTime } from '#core/clock'
import { formatThb } from '#core/money'

/**
 * Flagged slips: every slip no operator has decided on yet, the oldest
 * upload first (payment_slips' (review_decision, created_at) index), with
 * its order and who holds it.
 */
export async function slipQueue(filter: QueueFilter) {
  const query = db
    .from('payment_slips')
    .join('payment_orders', 'payment_orders.id', 'payment_slips.payment_order_id')
    .join('merchants', 'merchants.id', 'payment_slips.merchant_id')
    .whereNull('payment_slips.review_decision')
    .select(
      'payment_slips.id',
      'payment_slips.source',
      'payment_slips.verification_status',
      'payment_slips.verification_msg',
      'payment_slips.trans_ref',
      'payment_slips.created_at',
      'payment_orders.platform_order_id',
      'payment_orders.status',
      'payment_orders.amount',
      'payment_orders.transfer_amount',
      'merchants.merchant_id'
    )
    .orderBy('payment_slips.created_at', 'asc')
    .orderBy('payment_slips.id', 'asc')
  if (filter.mineOf !== null) {
    query.whereIn('payment_slips.id', itemsAssignedTo('slips', filter.mineOf))
  }
  const page = await query.paginate(filter.page, filter.perPage)
  const rows = page.all()
  const holders = await assignmentsOf(
    'slips',
    rows.map((row) => String(row.id))
  )
  return {
    page,
    rows: rows.map((row) => {
      const since = new Date(row.created_at)
      const holder = holders.get(String(row.id)) ?? null
      return {
        item_id: String(row.id),
        slip_id: Number(row.id),
        source: String(row.source),
        verification_status: String(row.verification_status),
        verification_msg: String(row.verification_msg),
        trans_ref: (row.trans_ref as string | null) ?? null,
        platform_order_id: String(row.platform_order_id),
        order_status: String(row.status),
        merchant_id: String(row.merchant_id),
        amount: formatThb(Number(row.amount)),
        transfer_amount: formatThb(Number(row.transfer_amount)),
        uploaded: formatGatewayDateTime(since),
        age: ageLabel(since),
        age_class: ageClass(since),
        holder: holder?.operatorEmail ?? null,
        holder_id: holder?.operatorId ?? null,
      }
    }),
  }
}

export async function slipCount() {
  const row = await db
    .from('payment_slips')
    .whereNull('review_decision')
    .count('* as total')
    .first()
  return Number(row?.total ?? 0)
}

/**
 * Statement lines that may be the slip's transfer: credits on the order's
 * deposit account within ±2 hours of `around` (the slip's transfer time, or
 * its upload) and within ±1 THB of the order's transfer_amount. Reads the
 * statement_lines (line_at, deposit_account_id, status) index by time.
 */
export async function linesNear(accountId: number, around: Date, transferAmount: number) {
  const hours = 2 * 60 * 60 * 1000
  const rows = await db
    .from('statement_lines')
    .where('line_at', '>=', new Date(around.getTime() - hours))
    .where('line_at', '<=', new Date(around.getTime() + hours))
    .where('deposit_account_id', accountId)
    .where('direction', 'credit')
    .whereBetween('amount', [transferAmount - 100, transferAmount + 100])
    .orderBy('line_at', 'asc')
    .limit(50)
    .select('id', 'line_at', 'amount', 'reference', 'description', 'status', 'note', 'order_id')
  const orderIds = rows.map((row) => row.order_id).filter((id) => id !== null)
  const orders = orderIds.length
    ? await db.from('payment_orders').whereIn('id', orderIds).select('id', 'platform_order_id')
    : []
  const platformIds = new Map(orders.map((row) => [Number(row.id), String(row.platform_order_id)]))
  return rows.map((row) => ({
    id: Number(row.id),
    time: formatGatewayDateTime(new Date(row.line_at)),
    amount: formatThb(Number(row.amount)),
    exact: Number(row.amount) === transferAmount,
    reference: (row.reference as string | null) ?? null,
    description: String(row.description ?? ''),
    status: String(row.status),
    note: (row.note as string | null) ?? null,
    order: row.order_id === null ? null : (platformIds.get(Number(row.order_id)) ?? null),
  }))
}
