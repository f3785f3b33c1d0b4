import type { BankCode } from '#core/banks'

/**
 * A payment order as a merchant asks for it, already checked for shape
 * (what produces it, e.g. the merchant API's validator, owns the format
 * rules); CreatePayment applies the merchant's and the platform's rules.
 */
export interface PaymentInput {
  merchantOrderId: string
  /** Satang. */
  amount: number
  /** The payer's bank. */
  bank: BankCode
  accountName: string
  accountNo: string
  notifyUrl: string | null
}
