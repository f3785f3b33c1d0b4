import type Merchant from '#merchants/models/merchant'
import { rateFee } from '#core/money'
import type { PayoutKind } from '#payouts/models/payout_order'

/**
 * Fee of a payout in satang. Withdrawals: flat + rate (basis points of the
 * amount, rounded half up to the satang). Settlements: the flat fee only.
 */
export function payoutFee(merchant: Merchant, kind: PayoutKind, amount: number): number {
  if (kind === 'settlement') return merchant.settlementFeeFlat
  return merchant.withdrawFeeFlat + rateFee(amount, merchant.withdrawFeeRateBps)
}
