import db from '@adonisjs/lucid/services/db'
import { formatThb } from '#core/money'
import { formatGatewayDateTime } from '#core/clock'

/** How many of a merchant's latest late successes are checked for a released hold. */
const CANDIDATES = 200

const asDate = (value: unknown) =>
  value === null ? null : value instanceof Date ? value : new Date(String(value))

/**
 * Merchants flagged with `negative_balance_flag` (a payout confirmed after
 * its hold had already gone back to balance), lowest balance first, each with
 * its latest payouts confirmed that way: successes whose hold had been
 * released (their `<kind>_hold_release` ledger posting exists). Those are
 * looked for among the merchant's latest successes completed after their
 * hold's expiry (index `merchant_id, status, done_at`), at most
 * `ordersPerMerchant` each; flagged merchants are few.
 */
export async function negativeBalanceMerchants(limit = 100, ordersPerMerchant = 10) {
  const merchants = await db
    .from('merchants')
    .join('platforms', 'platforms.id', 'merchants.platform_id')
    .leftJoin('merchant_balances', 'merchant_balances.merchant_id', 'merchants.id')
    .where('merchants.negative_balance_flag', true)
    .orderBy('merchant_balances.balance', 'asc')
    .orderBy('merchants.id', 'asc')
    .limit(limit)
    .select(
      'merchants.id',
      'merchants.merchant_id',
      'merchants.name',
      'merchants.status',
      'merchants.withdraw_enabled',
      'merchants.settlement_enabled',
      'platforms.code as platform',
      'merchant_balances.balance',
      'merchant_balances.freeze_balance'
    )

  return Promise.all(
    merchants.map(async (merchant) => {
      // A success before the hold's expiry consumed the hold itself.
      const candidates = await db
        .from('payout_orders')
        .where('merchant_id', merchant.id)
        .where('status', 'success')
        .whereRaw('done_at > hold_expires_at')
        .orderBy('done_at', 'desc')
        .limit(CANDIDATES)
        .select('platform_order_id', 'kind', 'amount', 'fee', 'hold_expires_at', 'done_at')
      // The release's posting, by its idempotency key (unique index).
      const releaseKey = (order: { kind: string; platform_order_id: string }) =>
        `${order.kind}_hold_release:${order.kind}:${order.platform_order_id}`
      const released =
        candidates.length === 0
          ? new Set<string>()
          : new Set(
              (
                await db
                  .from('ledger_transactions')
                  .whereIn('idempotency_key', candidates.map(releaseKey))
                  .select('idempotency_key')
              ).map((row) => row.idempotency_key as string)
            )
      const orders = candidates
        .filter((order) => released.has(releaseKey(order)))
        .slice(0, ordersPerMerchant)
      return {
        merchant_id: merchant.merchant_id as string,
        name: merchant.name as string,
        platform: merchant.platform as string,
        status: merchant.status as string,
        withdraw_enabled: Boolean(merchant.withdraw_enabled),
        settlement_enabled: Boolean(merchant.settlement_enabled),
        balance: formatThb(Number(merchant.balance ?? 0)),
        freeze_balance: formatThb(Number(merchant.freeze_balance ?? 0)),
        orders: orders.map((order) => ({
          platform_order_id: order.platform_order_id as string,
          kind: order.kind as string,
          total: formatThb(Number(order.amount) + Number(order.fee)),
          hold_expired_at: formatGatewayDateTime(asDate(order.hold_expires_at)),
          done_at: formatGatewayDateTime(asDate(order.done_at)),
        })),
      }
    })
  )
}
