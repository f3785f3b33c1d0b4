/** A posting that would break double entry: a programming error, never user input. */
export class LedgerImbalanceError extends Error {}

/** A guarded merchant account would go below zero; the posting was not written. */
export class InsufficientBalanceError extends Error {
  constructor(public merchantId: number) {
    super(`Insufficient balance for merchant ${merchantId}`)
  }
}

/**
 * A posting with this idempotency key exists (one posting per kind and
 * reference): the change it belongs to was already made. The caller's
 * transaction must roll back; nothing was written twice.
 */
export class DuplicatePostingError extends Error {
  constructor(public idempotencyKey: string) {
    super(`Ledger posting ${idempotencyKey} was already made`)
  }
}
