import type PayoutOrder from '#payouts/models/payout_order'
import type { PayoutOutcome } from '#payouts/actions/complete_payout'

/** What a connector did with an order the worker handed it. */
export type SubmitResult =
  /** The bank accepted the transfer; its outcome arrives later (→ pending). */
  | { state: 'pending'; reference: string }
  /** The order waits for a batch (bulk file); it stays in queue. */
  | { state: 'queued' }

/** The bank's final answer for a transfer it accepted. */
export interface BankAnswer {
  reference: string
  outcome: PayoutOutcome
}

/**
 * A way to move money out to a bank account.
 *
 * `submit` must be idempotent per order (the worker may call it again after a
 * crash): a connector derives its reference from the order or remembers what
 * it already accepted.
 *
 * `inquire` asks the bank what became of a transfer, for when its answer was
 * lost (a worker died, Redis lost the job): the final answer, or null while
 * the bank has none or cannot be asked (answers then come another way, such
 * as statement lines).
 */
export interface PayoutConnector {
  readonly name: string
  /** Orders wait in `queue` for a batch instead of being submitted one by one. */
  readonly batched: boolean
  submit(order: PayoutOrder): Promise<SubmitResult>
  inquire(order: PayoutOrder): Promise<BankAnswer | null>
}
