import type Operator from '#operators/models/operator'
import SavedOrderView from '#payments/models/saved_order_view'
import {
  ORDER_KINDS,
  channelChoices,
  hasErrors,
  orderQueryString,
  type OrderKind,
  type OrderSearch,
  type OrderSort,
} from '#payments/order_filters'
import { BANK_CHOICES, orderRow, searchOrders, statusChoices } from '#admin/queries/order_search'

const PER_PAGE = 25

export const KIND_LABELS: Record<OrderKind, string> = {
  payments: 'Payments',
  withdrawals: 'Withdrawals',
  settlements: 'Settlements',
}

/** A status as a badge colour: paid or successful, failed, on hold, in progress. */
export function statusTone(status: string) {
  if (['unsettled_paid', 'settled_paid', 'success'].includes(status)) return 'ok'
  if (['error', 'failed', 'cancelled', 'rejected'].includes(status)) return 'bad'
  if (status === 'freeze') return 'warn'
  return ''
}

/** The saved views of the search's kind, shared by every operator; `operator` deletes their own. */
async function savedViews(search: OrderSearch, operator: Operator) {
  const views = await SavedOrderView.query()
    .where('kind', search.kind)
    .preload('creator')
    .orderBy('name')
  return views.map((saved) => ({
    id: saved.id,
    name: saved.name,
    href: `/admin/orders?${saved.query}`,
    active: saved.query === orderQueryString(search),
    created_by: saved.creator?.email ?? `operator ${saved.createdBy}`,
    own: saved.createdBy === operator.id,
  }))
}

/**
 * The orders list: one page of the search (none while a filter is wrong),
 * the kinds' tabs, the filters' choices, the sort links, the saved views.
 */
export async function orderListPage(search: OrderSearch, pageNumber: number, operator: Operator) {
  const page = hasErrors(search) ? null : await searchOrders(search, pageNumber, PER_PAGE)
  return {
    search,
    kind: search.kind,
    filters: search.filters,
    errors: search.errors,
    kinds: ORDER_KINDS.map((kind) => ({
      kind,
      label: KIND_LABELS[kind],
      href: `/admin/orders?kind=${kind}`,
      active: kind === search.kind,
    })),
    statusChoices: statusChoices(search.kind),
    channelChoices: channelChoices(search.kind),
    bankChoices: BANK_CHOICES,
    rows: (page?.all() ?? []).map((row) => {
      const shown = orderRow(search.kind, row)
      return { ...shown, tone: statusTone(shown.status) }
    }),
    page,
    query: (to: number) => orderQueryString(search, { page: String(to) }),
    /** A column heading's link: the other direction when the list is already sorted by it. */
    sortQuery: (column: OrderSort) =>
      orderQueryString({
        ...search,
        sort: column,
        dir: search.sort === column && search.dir === 'desc' ? 'asc' : 'desc',
      }),
    sortMark: (column: OrderSort) =>
      search.sort === column ? (search.dir === 'asc' ? ' ↑' : ' ↓') : '',
    currentQuery: orderQueryString(search),
    exportHref: `/admin/orders.csv?${orderQueryString(search)}`,
    views: await savedViews(search, operator),
  }
}
