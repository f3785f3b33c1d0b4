import type { DateTime } from 'luxon'
import type PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'

/** What a slip's mini-QR names: the sending bank and the transaction reference. */
export interface SlipReference {
  /** 3-digit interbank code of the sending bank. */
  sendingBank: string
  transRef: string
}

/** Where the transfer went, as the source knows it (an account may be masked: `xxx-x-x1234-x`). */
export interface SlipReceiver {
  account: string | null
  /** PromptPay id or biller id. */
  proxy: string | null
}

/** The order a transaction has already been matched to (a statement line's order). */
export interface ClaimedOrder {
  orderType: 'payment' | 'withdraw' | 'settlement'
  orderId: number
}

/** What a source establishes about the transaction a slip names. */
export interface SlipFacts {
  /** satang */
  amount: number
  receiver: SlipReceiver
  transferredAt: DateTime | null
  /** ref1 of a bill payment, when the source has it. */
  reference1: string | null
  /** Which source answered: `statement`, `sandbox`, a provider's name. */
  source: string
  /** Where the answer came from within the source (a statement line id, a provider's id). */
  evidence: Record<string, unknown>
  claimedBy: ClaimedOrder | null
}

/** The order a slip was uploaded for, with its deposit account. */
export interface SlipOrder {
  order: PaymentOrder
  account: DepositAccount
}

/**
 * A source of a transaction's facts, looked up by the slip's reference: the
 * gateway's own statement lines, a bank's or a provider's slip-verification
 * service. `null` when it knows nothing of the transaction (yet). Throws only
 * when it cannot answer (the slip then stays pending).
 */
export interface SlipVerifier {
  readonly name: string
  lookup(slip: SlipReference, target: SlipOrder): Promise<SlipFacts | null>
}
