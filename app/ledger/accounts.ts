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
  /**
   * Money a statement line says a deposit account received, not yet claimed
   * by a merchant credit or a return: the unidentified receipts.
   */
  'deposit_clearing',
  /**
   * Payments credited before their bank line arrived (a slip approved, a
   * payment marked paid): money the bank is expected to receive.
   */
  'deposit_receivable',
  /**
   * Money the gateway sent or must send out (payouts that succeeded, lines
   * returned to the payer) until the bank's debit line shows it left.
   */
  'payout_clearing',
  /** Payment, withdraw and settlement fees earned by the gateway. */
  'fee_revenue',
  /** Satang added to amounts to make transfer_amount unique. */
  'slot_adjustment',
  /** Operator adjustments and opening balances, always with an audit entry. */
  'adjustments',
  /** Debits the bank took that no transfer explains (charges), as an operator recorded them. */
  'bank_charges',
] as const

export type GatewayAccountCode = (typeof GATEWAY_ACCOUNTS)[number]

export const GATEWAY_OWNER = 'gateway'

/**
 * The ledger account of a deposit account's bank account: the gateway's, one
 * per deposit account. Assets carry the ledger's negative sign (merchant
 * balances, the gateway's debts, are positive): a bank account that received
 * 1,000.00 THB reads -1,000.00.
 */
export function bankAccountCode(depositAccountId: number) {
  return `bank:${depositAccountId}`
}

/** The deposit account id of a bank account code, or null for any other code. */
export function depositAccountOfCode(code: string): number | null {
  const match = /^bank:(\d+)$/.exec(code)
  return match ? Number(match[1]) : null
}

export function isMerchantAccount(code: string): code is MerchantAccountCode {
  return code in MERCHANT_ACCOUNTS
}
