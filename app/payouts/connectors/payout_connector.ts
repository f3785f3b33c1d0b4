import type PayoutOrder from '#models/payout_order'

/** What a connector did with an order the worker handed it. */
export type SubmitResult =
  /** The bank accepted the transfer; its outcome arrives later (→ pending). */
  | { state: 'pending'; reference: string }
  /** The order waits for a batch (bulk file); it stays in queue. */
  | { state: 'queued' }

/**
 * A way to move money out to a bank account. `submit` must be idempotent per
 * order (the worker may call it again after a crash): a connector derives its
 * reference from the order or remembers what it already accepted.
 */
export interface PayoutConnector {
  readonly name: string
  submit(order: PayoutOrder): Promise<SubmitResult>
}
