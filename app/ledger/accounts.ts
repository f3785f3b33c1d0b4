/**
 * Chart of accounts. Each merchant has three accounts whose sums are the
 * three figures of POST /balance; the gateway keeps its own accounts for the
 * other side of every movement.
 */
export const MERCHANT_ACCOUNTS = {
  available: 'balance',
  frozen: 'freeze_balance',
  unsettled: 'unsettle_balance',
} as const

export type MerchantAccountCode = keyof typeof MERCHANT_ACCOUNTS
export type BalanceColumn = (typeof MERCHANT_ACCOUNTS)[MerchantAccountCode]

export const GATEWAY_ACCOUNTS = [
  /** Money received on deposit accounts, not yet attributed to a merchant. */
  'deposit_clearing',
  /** Money sent out to customers' and merchants' banks. */
  'payout_clearing',
  /** Payment, withdraw and settlement fees earned by the gateway. */
  'fee_revenue',
  /** Satang added to amounts to make transfer_amount unique. */
  'slot_adjustment',
  /** Operator adjustments and opening balances, always with an audit entry. */
  'adjustments',
] as const

export type GatewayAccountCode = (typeof GATEWAY_ACCOUNTS)[number]

export const GATEWAY_OWNER = 'gateway'

export function isMerchantAccount(code: string): code is MerchantAccountCode {
  return code in MERCHANT_ACCOUNTS
}
