import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { PayoutKind } from '#payouts/models/payout_order'
import { PAYOUT_STATUSES, PUBLIC_PAYOUT_STATUS, type PayoutStatus } from '#payouts/payout_state'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import type { OrderCriteria } from '#payments/orders_query'

/**
 * The back-office search of withdrawals (W) and settlements (M): the
 * criteria of app/payments/orders_query.ts applied to payout_orders. The
 * caller validated every value; this only builds the query.
 */

/** The public statuses (spec: open, success, failed) with the internal ones each covers. */
export const PUBLIC_PAYOUT_STATUSES = (['open', 'success', 'failed'] as const).map((status) => ({
  status,
  internal: PAYOUT_STATUSES.filter((internal) => PUBLIC_PAYOUT_STATUS[internal] === status),
}))

/** The status filter's values: "public:<status>" for the spec's, the internal ones as they are. */
export function payoutStatusFilter(value: string): PayoutStatus[] | null {
  if (value.startsWith('public:')) {
    return (
      PUBLIC_PAYOUT_STATUSES.find((entry) => `public:${entry.status}` === value)?.internal ?? null
    )
  }
  return (PAYOUT_STATUSES as readonly string[]).includes(value) ? [value as PayoutStatus] : null
}

/** The payout "channel": the connector that carries the transfer (merchants.payout_route). */
export const PAYOUT_CHANNELS = PAYOUT_CONNECTOR_NAMES

/** Columns the list and the export read. */
const COLUMNS = [
  'payout_orders.id',
  'payout_orders.platform_order_id',
  'payout_orders.merchant_order_id',
  'merchants.merchant_id as merchant',
  'payout_orders.kind',
  'payout_orders.amount',
  'payout_orders.fee',
  'payout_orders.bank',
  'payout_orders.account_no',
  'payout_orders.account_name',
  'payout_orders.status',
  'payout_orders.hold_state',
  'payout_orders.connector',
  'payout_orders.connector_reference',
  'payout_orders.batch_id',
  'payout_orders.failure_reason',
  'payout_orders.created_at',
  'payout_orders.done_at',
]

const SORT_COLUMNS = {
  created: 'payout_orders.created_at',
  amount: 'payout_orders.amount',
} as const

/**
 * Payout orders of one kind matching the criteria, in the criteria's order,
 * with the list's columns; `rows: false`: the filtered table alone (to
 * count). The orders table drives the query (left join; the merchant filter
 * is a subquery the server runs once), so its indexes serve filters and order.
 */
export function payoutSearchQuery(
  kind: PayoutKind,
  criteria: OrderCriteria,
  client: QueryClientContract = db.connection(),
  { rows = true } = {}
) {
  const query = client.from('payout_orders').where('payout_orders.kind', kind)
  const { platformOrderId } = criteria
  if (platformOrderId && 'exact' in platformOrderId) {
    query.where('payout_orders.platform_order_id', platformOrderId.exact)
  } else if (platformOrderId) {
    query.where('payout_orders.platform_order_id', 'like', platformOrderId.like)
  }
  if (criteria.merchantOrderId) {
    query.where('payout_orders.merchant_order_id', criteria.merchantOrderId)
  }
  if (criteria.merchantId) {
    query.where(
      'payout_orders.merchant_id',
      client.from('merchants').where('merchant_id', criteria.merchantId).select('id')
    )
  }
  if (criteria.statuses) query.whereIn('payout_orders.status', criteria.statuses)
  if (criteria.channel) query.where('payout_orders.connector', criteria.channel)
  if (criteria.accountNo) query.where('payout_orders.account_no', criteria.accountNo)
  if (criteria.bank) query.where('payout_orders.bank', criteria.bank)
  if (criteria.amountMin !== null) query.where('payout_orders.amount', '>=', criteria.amountMin)
  if (criteria.amountMax !== null) query.where('payout_orders.amount', '<=', criteria.amountMax)
  if (criteria.createdFrom) query.where('payout_orders.created_at', '>=', criteria.createdFrom)
  if (criteria.createdBefore) query.where('payout_orders.created_at', '<', criteria.createdBefore)
  if (!rows) return query
  return query
    .leftJoin('merchants', 'merchants.id', 'payout_orders.merchant_id')
    .select(COLUMNS)
    .orderBy(SORT_COLUMNS[criteria.sort], criteria.dir)
    .orderBy('payout_orders.id', criteria.dir)
}
