import type Merchant from '#models/merchant'
import type { PayoutKind } from '#models/payout_order'

/**
 * Fee of a payout in satang. Withdrawals: flat + rate (basis points of the
 * amount, rounded half up to the satang). Settlements: the flat fee only.
 */
export function payoutFee(merchant: Merchant, kind: PayoutKind, amount: number): number {
  if (kind === 'settlement') return merchant.settlementFeeFlat
  // BigInt: amount × rate can pass 2^53 for large amounts.
  const rated = Number((BigInt(amount) * BigInt(merchant.withdrawFeeRateBps) + 5000n) / 10000n)
  return merchant.withdrawFeeFlat + rated
}
