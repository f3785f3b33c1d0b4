import type { BankCode } from '#core/banks'

/**
 * A withdrawal or settlement as a merchant asks for it, already checked for
 * shape (what produces it, e.g. the merchant API's validator, owns the
 * format rules); CreatePayout applies the merchant's rules (amount range,
 * registered accounts, balance).
 */
export interface PayoutInput {
  merchantOrderId: string
  /** Satang. */
  amount: number
  /** The destination bank. */
  bank: BankCode
  accountName: string
  accountNo: string
  notifyUrl: string | null
}
