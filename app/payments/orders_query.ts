import type { Readable } from 'node:stream'
import { DateTime } from 'luxon'
import db from '@adonisjs/lucid/services/db'
import { SimplePaginator } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { PAYMENT_STATUSES } from '#payments/payment_state'
import {
  PAYOUT_CHANNELS,
  PUBLIC_PAYOUT_STATUSES,
  payoutSearchQuery,
  payoutStatusFilter,
} from '#payouts/payout_orders_query'
import { PAYOUT_STATUSES, PUBLIC_PAYOUT_STATUS, type PayoutStatus } from '#payouts/payout_state'
import { BANKS, isBankCode } from '#core/banks'
import { GATEWAY_ZONE, formatGatewayDateTime } from '#core/clock'
import { assertSatang, formatAmount, parseAmount, formatThb } from '#core/money'
import type { OrderType } from '#core/order_events'

/**
 * The back-office search of orders: payments (P) here, withdrawals (W) and
 * settlements (M) in app/payouts/payout_orders_query.ts. One set of filters
 * for the three kinds, read from the list's query string and validated
 * (a filter that cannot be understood is an error beside its field, never
 * silently dropped: an export would otherwise hold more than asked); the
 * same query serves a page of 25 and the export of every match.
 */

export const ORDER_KINDS = ['payments', 'withdrawals', 'settlements'] as const
export type OrderKind = (typeof ORDER_KINDS)[number]

/** The order_type of the order events, callbacks and statement lines of each kind. */
export const ORDER_TYPE_OF_KIND: Record<OrderKind, OrderType> = {
  payments: 'payment',
  withdrawals: 'withdraw',
  settlements: 'settlement',
}

/** The kind a platform_order_id's marker (index 3) names. */
export const KIND_OF_MARKER: Record<string, OrderKind> = {
  P: 'payments',
  W: 'withdrawals',
  M: 'settlements',
}

export const ORDER_FILTER_FIELDS = [
  'platform_order_id',
  'merchant_order_id',
  'merchant',
  'status',
  'channel',
  'deposit_account',
  'bank',
  'account_no',
  'amount_min',
  'amount_max',
  'from',
  'to',
  'slip',
] as const
export type OrderFilterField = (typeof ORDER_FILTER_FIELDS)[number]
/** The filters as typed (trimmed), to fill the form again and to build links. */
export type OrderFilters = Partial<Record<OrderFilterField, string>>

/** Filters that only payments have (deposit accounts and slips). */
const PAYMENT_ONLY: OrderFilterField[] = ['deposit_account', 'slip']

/** Orders of the list: order time (default, newest first) or amount; each has its index. */
export const ORDER_SORTS = ['created', 'amount'] as const
export type OrderSort = (typeof ORDER_SORTS)[number]

/** What the queries apply: validated values, satang, UTC instants. */
export interface OrderCriteria {
  /** Exact (24 characters) or the start of one (a LIKE pattern, escaped). */
  platformOrderId: { exact: string } | { like: string } | null
  merchantOrderId: string | null
  merchantId: string | null
  statuses: string[] | null
  /** Payments: open orders with a slip waiting for an operator. */
  awaitingReview: boolean
  channel: string | null
  depositAccountId: number | null
  bank: string | null
  accountNo: string | null
  amountMin: number | null
  amountMax: number | null
  /** [createdFrom, createdBefore): Bangkok days, as UTC instants. */
  createdFrom: Date | null
  createdBefore: Date | null
  /** Payments: a slip's SHA-256 (lowercase hex) or transaction reference. */
  slip: string | null
  sort: OrderSort
  dir: 'asc' | 'desc'
}

export interface OrderSearch {
  kind: OrderKind
  filters: OrderFilters
  sort: OrderSort
  dir: 'asc' | 'desc'
  /** Field → message; when there is one, nothing is listed or exported. */
  errors: Partial<Record<OrderFilterField, string>>
  criteria: OrderCriteria
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const ALPHANUMERIC = /^[A-Za-z0-9]+$/

function bangkokDay(value: string) {
  if (!DAY.test(value)) return null
  const day = DateTime.fromISO(value, { zone: GATEWAY_ZONE })
  return day.isValid ? day.startOf('day') : null
}

function likePrefix(value: string) {
  return `${value.replace(/[\\%_]/g, (char) => `\\${char}`)}%`
}

/**
 * Reads the list's filters, sort and kind from a query string. Unknown
 * parameters are ignored; each known one is checked. A platform_order_id
 * long enough to carry its marker decides the kind (an id pasted on the
 * wrong tab still finds its order).
 */
export function readOrderSearch(input: Record<string, unknown>): OrderSearch {
  const text = (key: string) =>
    String(input[key] ?? '')
      .trim()
      .slice(0, 200)
  const filters: OrderFilters = {}
  for (const field of ORDER_FILTER_FIELDS) {
    const value = text(field)
    if (value) filters[field] = value
  }
  let kind: OrderKind = (ORDER_KINDS as readonly string[]).includes(text('kind'))
    ? (text('kind') as OrderKind)
    : 'payments'
  const marker = filters.platform_order_id?.[3]
  if (marker && KIND_OF_MARKER[marker]) kind = KIND_OF_MARKER[marker]
  if (kind !== 'payments') for (const field of PAYMENT_ONLY) delete filters[field]

  const sort = (ORDER_SORTS as readonly string[]).includes(text('sort'))
    ? (text('sort') as OrderSort)
    : 'created'
  const dir = text('dir') === 'asc' ? 'asc' : 'desc'
  const errors: OrderSearch['errors'] = {}
  const criteria: OrderCriteria = {
    platformOrderId: null,
    merchantOrderId: null,
    merchantId: null,
    statuses: null,
    awaitingReview: false,
    channel: null,
    depositAccountId: null,
    bank: null,
    accountNo: null,
    amountMin: null,
    amountMax: null,
    createdFrom: null,
    createdBefore: null,
    slip: null,
    sort,
    dir,
  }

  const id = filters.platform_order_id
  if (id !== undefined) {
    if (!ALPHANUMERIC.test(id) || id.length > 24) {
      errors.platform_order_id = 'platform_order_id is up to 24 letters and digits'
    } else {
      criteria.platformOrderId = id.length === 24 ? { exact: id } : { like: likePrefix(id) }
    }
  }
  const merchantOrderId = filters.merchant_order_id
  if (merchantOrderId !== undefined) {
    if (!ALPHANUMERIC.test(merchantOrderId) || merchantOrderId.length > 40) {
      errors.merchant_order_id = 'merchant_order_id is up to 40 letters and digits'
    } else {
      criteria.merchantOrderId = merchantOrderId
    }
  }
  const merchant = filters.merchant
  if (merchant !== undefined) {
    if (!ALPHANUMERIC.test(merchant) || merchant.length > 32) {
      errors.merchant = 'merchant is a merchant_id: up to 32 letters and digits'
    } else {
      criteria.merchantId = merchant
    }
  }
  if (filters.status !== undefined) {
    const status = filters.status
    if (kind === 'payments') {
      if (status === 'awaiting_review') criteria.awaitingReview = true
      else if ((PAYMENT_STATUSES as readonly string[]).includes(status))
        criteria.statuses = [status]
      else errors.status = 'status is not a payment status'
    } else {
      criteria.statuses = payoutStatusFilter(status)
      if (!criteria.statuses) errors.status = 'status is not a withdraw or settlement status'
    }
  }
  if (filters.channel !== undefined) {
    if (!channelChoices(kind).some((choice) => choice.value === filters.channel)) {
      errors.channel = `channel must be one of: ${channelChoices(kind)
        .map((choice) => choice.value)
        .join(', ')}`
    } else {
      criteria.channel = filters.channel
    }
  }
  if (filters.deposit_account !== undefined) {
    const accountId = Number(filters.deposit_account)
    if (!/^\d{1,10}$/.test(filters.deposit_account) || accountId <= 0) {
      errors.deposit_account = 'deposit account is the account id (a number)'
    } else {
      criteria.depositAccountId = accountId
    }
  }
  if (filters.bank !== undefined) {
    if (!isBankCode(filters.bank)) errors.bank = 'bank must be a bank code of the list'
    else criteria.bank = filters.bank
  }
  if (filters.account_no !== undefined) {
    // As the API stores it: non-digit characters are stripped.
    const digits = filters.account_no.replace(/\D/g, '')
    if (digits.length === 0 || digits.length > 15) {
      errors.account_no = 'account number is up to 15 digits'
    } else {
      criteria.accountNo = digits
    }
  }
  for (const [field, key] of [
    ['amount_min', 'amountMin'],
    ['amount_max', 'amountMax'],
  ] as const) {
    const value = filters[field]
    if (value === undefined) continue
    const satang = parseAmount(value.replaceAll(',', ''))
    if (satang === null) errors[field] = `${field} must be a THB amount (e.g. 1,500.00)`
    else criteria[key] = satang
  }
  if (
    criteria.amountMin !== null &&
    criteria.amountMax !== null &&
    criteria.amountMin > criteria.amountMax
  ) {
    errors.amount_max = 'amount_max must not be below amount_min'
  }
  const from = filters.from === undefined ? undefined : bangkokDay(filters.from)
  const to = filters.to === undefined ? undefined : bangkokDay(filters.to)
  if (from === null) errors.from = 'from must be a date (YYYY-MM-DD)'
  if (to === null) errors.to = 'to must be a date (YYYY-MM-DD)'
  if (from && to && to < from) errors.to = 'to must not be before from'
  if (from) criteria.createdFrom = from.toUTC().toJSDate()
  if (to) criteria.createdBefore = to.plus({ days: 1 }).toUTC().toJSDate()
  if (filters.slip !== undefined) {
    const slip = filters.slip
    if (/^[0-9a-fA-F]{64}$/.test(slip)) criteria.slip = slip.toLowerCase()
    else if (ALPHANUMERIC.test(slip) && slip.length <= 64) criteria.slip = slip
    else errors.slip = 'slip is a SHA-256 (64 hex digits) or a transaction reference'
  }
  return { kind, filters, sort, dir, errors, criteria }
}

/** The search as a query string (kind, filters, sort), with extra parameters such as the page. */
export function orderQueryString(
  search: Pick<OrderSearch, 'kind' | 'filters' | 'sort' | 'dir'>,
  extra: Record<string, string> = {}
) {
  const params: Record<string, string> = { kind: search.kind, ...search.filters }
  if (search.sort !== 'created') params.sort = search.sort
  if (search.dir !== 'desc') params.dir = search.dir
  return new URLSearchParams({ ...params, ...extra }).toString()
}

export function hasErrors(search: OrderSearch) {
  return Object.keys(search.errors).length > 0
}

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

export function channelChoices(kind: OrderKind) {
  const names = kind === 'payments' ? ['qr', 'transfer', 'external'] : PAYOUT_CHANNELS
  return names.map((value) => ({ value, label: value }))
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
