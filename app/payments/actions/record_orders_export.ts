import { recordAudit } from '#core/audit'
import type { Actor } from '#core/actor'
import { inTransaction } from '#core/transaction'
import { ORDER_TYPE_OF_KIND, type OrderSearch } from '#payments/order_filters'

/**
 * Records an export of the orders list: what was searched (kind, filters,
 * sort) and how many rows the file holds, written before its first byte is
 * sent (the export holds account numbers and amounts).
 */
export async function recordOrdersExport(search: OrderSearch, rows: number, actor: Actor) {
  await inTransaction((trx) =>
    recordAudit(trx, actor, {
      action: 'orders.export',
      target: { type: ORDER_TYPE_OF_KIND[search.kind], id: 'csv' },
      details: {
        kind: search.kind,
        filters: search.filters,
        sort: search.sort,
        dir: search.dir,
        rows,
      },
    })
  )
}
