/**
 * The order TTL passes for open payment orders (one merchant's, or all): each
 * slot (order_at … expire_at) moves back by the TTL, as if the customers had
 * waited it out. Expiry is decided by the worker's sweep alone
 * (sweepExpiredPayments: open orders with expire_at ≤ now), so the sweep
 * expires them as it would have TTL seconds later, without a scenario waiting
 * on the real clock. `run` is the scenario's way to query its database.
 * Returns how many orders were aged.
 */
export async function letOpenPaymentsExpire(
  run: (sql: string, values: unknown[]) => Promise<unknown>,
  ttlSeconds: number,
  merchantId?: number
) {
  const header = await run(
    `UPDATE payment_orders
        SET order_at = order_at - INTERVAL ? SECOND, expire_at = expire_at - INTERVAL ? SECOND
      WHERE status = 'open'${merchantId === undefined ? '' : ' AND merchant_id = ?'}`,
    [ttlSeconds, ttlSeconds, ...(merchantId === undefined ? [] : [merchantId])]
  )
  // An UPDATE's answer is mysql2's result header, not rows.
  return Number((header as { affectedRows?: number }).affectedRows ?? 0)
}
