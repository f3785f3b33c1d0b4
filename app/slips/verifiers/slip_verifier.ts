import type { DateTime } from 'luxon'
import type PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'

/** What a slip's mini-QR names: the sending bank and the transaction reference. */
export interface SlipReference {
  /** 3-digit interbank code of the sending bank. */
  sendingBank: string
  transRef: string
  /**
   * The QR's text as the image held it (what slip-verification providers
   * take as `data` / `payload`). Absent when only the bank and transRef are
   * known; a provider adapter then rebuilds the bank mini-QR from them.
   */
  qrText?: string
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
  /**
   * The source says this transaction was verified before (a provider's
   * "repeated slip" / duplicate flag): by an earlier slip of this gateway or
   * by anyone else sharing the provider's account. The rules decide whether
   * it is this order's own earlier slip (docs/slips.md).
   */
  repeated?: boolean
}

/** The order a slip was uploaded for, with its deposit account. */
export interface SlipOrder {
  order: PaymentOrder
  account: DepositAccount
}

/**
 * A source of a transaction's facts, looked up by the slip's reference: the
 * gateway's own statement lines, a bank's or a provider's slip-verification
 * service. `null` when it knows nothing of the transaction (yet).
 *
 * Besides facts or null, a source may end a lookup with one of the typed
 * outcomes below; anything else it throws means it could not answer. In
 * every case but `SlipRefused` the next configured source is asked, and a
 * slip no source established stays pending (checked again later).
 */
export interface SlipVerifier {
  readonly name: string
  lookup(slip: SlipReference, target: SlipOrder): Promise<SlipFacts | null>
}

/**
 * Why a source could not answer. None of them says anything about the slip:
 * the next source is asked, and without facts the slip stays pending.
 */
export type SourceFailure =
  /** No answer within the configured time. */
  | 'timeout'
  /** No connection, TLS refused, connection dropped. */
  | 'unreachable'
  /** The provider's own failure (5xx, its bank link down). */
  | 'server_error'
  /** Key, branch, IP allow-list or account refused or deactivated. */
  | 'credentials'
  /** Package expired or quota used up. */
  | 'quota'
  /** The provider refused what was sent (missing field, not a payment QR, …). */
  | 'rejected_request'
  /** An answer the adapter cannot read, or that contradicts the question. */
  | 'bad_answer'

/** A source that could not answer. Its message never carries a credential. */
export class SlipSourceFailed extends Error {
  constructor(
    readonly source: string,
    readonly reason: SourceFailure,
    message: string,
    readonly httpStatus: number | null = null,
    readonly code: string | null = null
  ) {
    super(`${source}: ${message}`)
    this.name = 'SlipSourceFailed'
  }
}

/**
 * The source knows of the transaction but cannot give its facts yet (the
 * bank has not published it: SlipOK's 1010 "delayed slip"). Not a refusal:
 * the slip stays pending and is checked again.
 */
export class SlipDelayed extends Error {
  constructor(
    readonly source: string,
    message: string,
    readonly evidence: Record<string, unknown> = {}
  ) {
    super(`${source}: ${message}`)
    this.name = 'SlipDelayed'
  }
}

/** What a source can refute about a slip without handing over the transaction's facts. */
export type SlipRefusalReason = 'repeated' | 'amount_mismatch' | 'receiver_mismatch'

/**
 * A source refutes the slip but gave no facts to judge by (a provider's
 * "repeated slip", "amount does not match" or "receiver does not match"
 * answered without the transaction). The other sources are still asked:
 * facts from any of them decide; otherwise this refusal does (docs/slips.md).
 */
export class SlipRefused extends Error {
  constructor(
    readonly source: string,
    readonly reason: SlipRefusalReason,
    message: string,
    readonly evidence: Record<string, unknown> = {}
  ) {
    super(`${source}: ${message}`)
    this.name = 'SlipRefused'
  }
}
