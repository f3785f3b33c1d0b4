import { DateTime } from 'luxon'
import { ORDER_KINDS, KIND_OF_MARKER, type OrderKind } from '#payments/order_kinds'
import { PAYMENT_STATUSES } from '#payments/payment_status'
import { PAYOUT_STATUSES, type PayoutStatus } from '#payouts/payout_status'
import { PUBLIC_PAYOUT_STATUS } from '#payouts/payout_state'
import { PAYOUT_CONNECTOR_NAMES } from '#payouts/connectors/registry'
import { isBankCode } from '#core/banks'
import { GATEWAY_ZONE } from '#core/clock'
import { parseAmount } from '#core/money'
import type { OrderType } from '#core/order_events'

/**
 * The orders list's filters: one set for payments (P), withdrawals (W) and
 * settlements (M), read from the list's query string and validated (a
 * filter that cannot be understood is an error beside its field, never
 * silently dropped: an export would otherwise hold more than asked). The
 * back-office search (app/admin/queries/order_search.ts) applies them; a
 * saved view (actions/save_order_view.ts) is refused and stored by the same
 * reading, so a view shows what the list would.
 */

export { ORDER_KINDS, KIND_OF_MARKER, type OrderKind } from '#payments/order_kinds'

/** The order_type of the order events, callbacks and statement lines of each kind. */
export const ORDER_TYPE_OF_KIND: Record<OrderKind, OrderType> = {
  payments: 'payment',
  withdrawals: 'withdraw',
  settlements: 'settlement',
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

export function channelChoices(kind: OrderKind) {
  const names = kind === 'payments' ? ['qr', 'transfer', 'external'] : PAYOUT_CHANNELS
  return names.map((value) => ({ value, label: value }))
}
