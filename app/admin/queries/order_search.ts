import { Readable, pipeline } from 'node:stream'
import { stringify } from 'csv-stringify'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { SimplePaginator } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { PAYMENT_STATUSES } from '#payments/payment_state'
import {
  PUBLIC_PAYOUT_STATUSES,
  type OrderCriteria,
  type OrderKind,
  type OrderSearch,
  type OrderSort,
} from '#payments/order_filters'
import type { PayoutKind } from '#payouts/models/payout_order'
import { PAYOUT_STATUSES, PUBLIC_PAYOUT_STATUS, type PayoutStatus } from '#payouts/payout_state'
import { BANKS } from '#core/banks'
import { formatGatewayDateTime } from '#core/clock'
import { assertSatang, formatAmount, formatThb } from '#core/money'

/**
 * The back-office search of orders: payments (P), withdrawals (W) and
 * settlements (M), with the filters app/payments/order_filters.ts reads
 * and validates; the same query serves a page of 25 and the export of
 * every match.
 */

/** The status filter's options for a kind, in groups. */
export function statusChoices(kind: OrderKind) {
  if (kind === 'payments') {
    return [
      {
        group: 'Status (as /payment/query shows it)',
        options: PAYMENT_STATUSES.map((status) => ({ value: status, label: status })),
      },
      {
        group: 'Internal',
        options: [{ value: 'awaiting_review', label: 'awaiting slip review' }],
      },
    ]
  }
  return [
    {
      group: 'Public (as the queries show it)',
      options: PUBLIC_PAYOUT_STATUSES.map(({ status, internal }) => ({
        value: `public:${status}`,
        label: `${status} (${internal.join(', ')})`,
      })),
    },
    {
      group: 'Internal',
      options: PAYOUT_STATUSES.map((status) => ({ value: status, label: status })),
    },
  ]
}

export const BANK_CHOICES = Object.keys(BANKS).map((value) => ({ value, label: value }))

/** Columns the payment list and export read. */
const PAYMENT_COLUMNS = [
  'payment_orders.id',
  'payment_orders.platform_order_id',
  'payment_orders.merchant_order_id',
  'merchants.merchant_id as merchant',
  'payment_orders.payment_type',
  'payment_orders.channel',
  'payment_orders.deposit_account_id',
  'deposit_accounts.bank as deposit_bank',
  'deposit_accounts.account_no as deposit_account_no',
  'payment_orders.amount',
  'payment_orders.transfer_amount',
  'payment_orders.fee',
  'payment_orders.status',
  'payment_orders.status_before_freeze',
  'payment_orders.awaiting_review',
  'payment_orders.error_reason',
  'payment_orders.customer_bank',
  'payment_orders.customer_account_no',
  'payment_orders.customer_account_name',
  'payment_orders.created_at',
  'payment_orders.expire_at',
  'payment_orders.paid_at',
  'payment_orders.settled_at',
]

const PAYMENT_SORT_COLUMNS: Record<OrderSort, string> = {
  created: 'payment_orders.created_at',
  amount: 'payment_orders.amount',
}

/** A merchant's numeric id from its merchant_id, as a subquery the server runs once. */
export function merchantKey(client: QueryClientContract, merchantId: string) {
  return client.from('merchants').where('merchant_id', merchantId).select('id')
}

/**
 * Payment orders matching the criteria, in the criteria's order, with the
 * list's columns; `rows: false`: the filtered table alone (to count).
 */
export function paymentSearchQuery(
  criteria: OrderCriteria,
  client: QueryClientContract = db.connection(),
  { rows = true } = {}
) {
  const query = client.from('payment_orders')
  const { platformOrderId } = criteria
  if (platformOrderId && 'exact' in platformOrderId) {
    query.where('payment_orders.platform_order_id', platformOrderId.exact)
  } else if (platformOrderId) {
    query.where('payment_orders.platform_order_id', 'like', platformOrderId.like)
  }
  if (criteria.merchantOrderId) {
    query.where('payment_orders.merchant_order_id', criteria.merchantOrderId)
  }
  if (criteria.merchantId) {
    query.where('payment_orders.merchant_id', merchantKey(client, criteria.merchantId))
  }
  if (criteria.statuses) query.whereIn('payment_orders.status', criteria.statuses)
  if (criteria.awaitingReview) query.where('payment_orders.awaiting_review', true)
  if (criteria.channel) query.where('payment_orders.channel', criteria.channel)
  if (criteria.depositAccountId) {
    query.where('payment_orders.deposit_account_id', criteria.depositAccountId)
  }
  if (criteria.accountNo) query.where('payment_orders.customer_account_no', criteria.accountNo)
  if (criteria.bank) query.where('payment_orders.customer_bank', criteria.bank)
  // The amount the order was created with (the customer pays it plus the account's few satang
  // of adjustment): one column, so that its index serves a narrow range.
  if (criteria.amountMin !== null) query.where('payment_orders.amount', '>=', criteria.amountMin)
  if (criteria.amountMax !== null) query.where('payment_orders.amount', '<=', criteria.amountMax)
  if (criteria.createdFrom) query.where('payment_orders.created_at', '>=', criteria.createdFrom)
  if (criteria.createdBefore) query.where('payment_orders.created_at', '<', criteria.createdBefore)
  if (criteria.slip) {
    const slip = criteria.slip
    query.whereIn(
      'payment_orders.id',
      client
        .from('payment_slips')
        .where((where) => where.where('sha256', slip).orWhere('trans_ref', slip))
        .select('payment_order_id')
    )
  }
  if (!rows) return query
  // Left joins: the orders table drives the query (its indexes serve the
  // filters and the order), the merchant and the account are looked up per row.
  return query
    .leftJoin('merchants', 'merchants.id', 'payment_orders.merchant_id')
    .leftJoin('deposit_accounts', 'deposit_accounts.id', 'payment_orders.deposit_account_id')
    .select(PAYMENT_COLUMNS)
    .orderBy(PAYMENT_SORT_COLUMNS[criteria.sort], criteria.dir)
    .orderBy('payment_orders.id', criteria.dir)
}

/** Columns the withdrawal and settlement list and export read. */
const PAYOUT_COLUMNS = [
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

const PAYOUT_SORT_COLUMNS = {
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
    .select(PAYOUT_COLUMNS)
    .orderBy(PAYOUT_SORT_COLUMNS[criteria.sort], criteria.dir)
    .orderBy('payout_orders.id', criteria.dir)
}

/**
 * Every order of the search's kind that matches, in its order (for a page
 * or a stream); `rows: false`: the filtered orders table alone (to count).
 */
export function orderSearchQuery(
  search: OrderSearch,
  client?: QueryClientContract,
  options: { rows?: boolean } = {}
) {
  if (search.kind === 'payments') return paymentSearchQuery(search.criteria, client, options)
  return payoutSearchQuery(
    search.kind === 'withdrawals' ? 'withdraw' : 'settlement',
    search.criteria,
    client,
    options
  )
}

/**
 * Every matching order as a stream of rows read from one cursor, with
 * backpressure (rows wait in the server while the reader is slow): an export
 * of any size in constant memory. Destroying the stream closes the cursor.
 */
export function orderStream(search: OrderSearch, client: QueryClientContract): Readable {
  const { sql, bindings } = orderSearchQuery(search, client).toSQL()
  return client.getReadClient().raw(sql, bindings).stream()
}

/**
 * How many orders the search matches: COUNT(*) on the orders table alone,
 * through the narrowest index the filters allow.
 */
export async function countOrders(search: OrderSearch, client?: QueryClientContract) {
  const query = orderSearchQuery(search, client, { rows: false }).count('* as total')
  const [row] = await query
  return Number(row.total)
}

/** One page of the search (25 by default) with the number of matches. */
export async function searchOrders(search: OrderSearch, page: number, perPage = 25) {
  const total = await countOrders(search)
  const rows = total > 0 ? await orderSearchQuery(search).forPage(page, perPage) : []
  return new SimplePaginator(total, perPage, page, ...rows)
}

const money = (value: unknown) => (value === null ? null : formatAmount(assertSatang(value)))
/** The list's amounts as operators read them; the CSV keeps `money`'s plain form. */
const thb = (value: unknown) => (value === null ? null : formatThb(assertSatang(value)))
const bangkok = (value: Date | null) => formatGatewayDateTime(value)

/** One row of the list, as the table shows it. */
export function orderRow(kind: OrderKind, row: Record<string, any>) {
  const common = {
    platform_order_id: String(row.platform_order_id),
    merchant_order_id: String(row.merchant_order_id),
    merchant: String(row.merchant),
    amount: thb(row.amount)!,
    created: bangkok(row.created_at)!,
  }
  if (kind === 'payments') {
    return {
      ...common,
      transfer_amount: thb(row.transfer_amount),
      status: String(row.status),
      status_before_freeze: row.status_before_freeze as string | null,
      awaiting_review: Boolean(row.awaiting_review),
      channel: String(row.channel),
      deposit_account_id: Number(row.deposit_account_id),
      deposit_account: `${row.deposit_bank} ${row.deposit_account_no}`,
      account: `${row.customer_bank} ${row.customer_account_no}`,
      account_name: String(row.customer_account_name),
      done: bangkok(row.paid_at),
    }
  }
  return {
    ...common,
    fee: thb(row.fee),
    status: String(row.status),
    public_status: PUBLIC_PAYOUT_STATUS[row.status as PayoutStatus],
    channel: String(row.connector),
    account: `${row.bank} ${row.account_no}`,
    account_name: String(row.account_name),
    done: bangkok(row.done_at),
  }
}

export type OrderRow = ReturnType<typeof orderRow>

const PAYOUT_EXPORT_COLUMNS = [
  'platform_order_id',
  'merchant_order_id',
  'merchant_id',
  'amount',
  'fee',
  'status',
  'internal_status',
  'hold_state',
  'bank',
  'account_no',
  'account_name',
  'connector',
  'connector_reference',
  'batch_id',
  'failure_reason',
  'order_datetime',
  'done_datetime',
]

/** The export's columns per kind (the spec's field names where it has one). */
export const EXPORT_COLUMNS: Record<OrderKind, string[]> = {
  payments: [
    'platform_order_id',
    'merchant_order_id',
    'merchant_id',
    'payment_type',
    'channel',
    'deposit_account_id',
    'deposit_bank',
    'deposit_account_no',
    'amount',
    'transfer_amount',
    'fee',
    'status',
    'awaiting_review',
    'error_reason',
    'bank',
    'account_no',
    'account_name',
    'order_datetime',
    'expire_datetime',
    'payment_datetime',
    'settled_datetime',
  ],
  withdrawals: PAYOUT_EXPORT_COLUMNS,
  settlements: PAYOUT_EXPORT_COLUMNS,
}

/** Text a spreadsheet would run as a formula gets a leading quote (names come from merchants). */
function cell(value: unknown) {
  if (value === null || value === undefined) return ''
  const text = String(value)
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
}

/** One exported line: amounts in THB with 2 decimals, times in GMT+7. */
export function exportRecord(kind: OrderKind, row: Record<string, any>): Record<string, string> {
  if (kind === 'payments') {
    return {
      platform_order_id: cell(row.platform_order_id),
      merchant_order_id: cell(row.merchant_order_id),
      merchant_id: cell(row.merchant),
      payment_type: cell(row.payment_type),
      channel: cell(row.channel),
      deposit_account_id: cell(row.deposit_account_id),
      deposit_bank: cell(row.deposit_bank),
      deposit_account_no: cell(row.deposit_account_no),
      amount: cell(money(row.amount)),
      transfer_amount: cell(money(row.transfer_amount)),
      fee: cell(money(row.fee)),
      status: cell(row.status),
      awaiting_review: row.awaiting_review ? 'yes' : 'no',
      error_reason: cell(row.error_reason),
      bank: cell(row.customer_bank),
      account_no: cell(row.customer_account_no),
      account_name: cell(row.customer_account_name),
      order_datetime: cell(bangkok(row.created_at)),
      expire_datetime: cell(bangkok(row.expire_at)),
      payment_datetime: cell(bangkok(row.paid_at)),
      settled_datetime: cell(bangkok(row.settled_at)),
    }
  }
  return {
    platform_order_id: cell(row.platform_order_id),
    merchant_order_id: cell(row.merchant_order_id),
    merchant_id: cell(row.merchant),
    amount: cell(money(row.amount)),
    fee: cell(money(row.fee)),
    status: cell(PUBLIC_PAYOUT_STATUS[row.status as PayoutStatus]),
    internal_status: cell(row.status),
    hold_state: cell(row.hold_state),
    bank: cell(row.bank),
    account_no: cell(row.account_no),
    account_name: cell(row.account_name),
    connector: cell(row.connector),
    connector_reference: cell(row.connector_reference),
    batch_id: cell(row.batch_id),
    failure_reason: cell(row.failure_reason),
    order_datetime: cell(bangkok(row.created_at)),
    done_datetime: cell(bangkok(row.done_at)),
  }
}

/**
 * Every order the search matches as a CSV stream, however many, read from
 * one database cursor (constant memory) in the list's order. The count and
 * the rows come from one snapshot (a repeatable-read transaction): `counted`
 * is told the number of rows before the first is read, so what it records
 * is exactly what is sent. The snapshot ends with the stream, however it ends.
 */
export async function exportOrders(
  search: OrderSearch,
  counted: (rows: number) => Promise<unknown>
): Promise<Readable> {
  const snapshot = await db.transaction({ isolationLevel: 'repeatable read' })
  let source: Readable
  try {
    await counted(await countOrders(search, snapshot))
    source = orderStream(search, snapshot)
  } catch (error) {
    await snapshot.rollback()
    throw error
  }
  const kind = search.kind
  const records = Readable.from(
    (async function* () {
      for await (const row of source) yield exportRecord(kind, row)
    })()
  )
  const csv = stringify({ header: true, columns: EXPORT_COLUMNS[kind] })
  // A client that goes away destroys the CSV stream: the cursor is closed and the snapshot ends.
  pipeline(records, csv, (error) => {
    if (error) logger.info({ err: error }, 'orders export ended early')
    snapshot
      .rollback()
      .catch((rollbackError) => logger.warn({ err: rollbackError }, 'export snapshot'))
  })
  return csv
}
