/**
 * The kinds of order the back-office lists: payments (P), withdrawals (W)
 * and settlements (M), and the marker (index 3 of a platform_order_id) that
 * names each. This file imports nothing, so that a model (SavedOrderView)
 * can name a kind without loading the filters.
 */
export const ORDER_KINDS = ['payments', 'withdrawals', 'settlements'] as const
export type OrderKind = (typeof ORDER_KINDS)[number]

/** The kind a platform_order_id's marker (index 3) names. */
export const KIND_OF_MARKER: Record<string, OrderKind> = {
  P: 'payments',
  W: 'withdrawals',
  M: 'settlements',
}
