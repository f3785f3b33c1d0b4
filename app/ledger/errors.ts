/** A posting that would break double entry: a programming error, never user input. */
export class LedgerImbalanceError extends Error {}

/** A guarded merchant account would go below zero; the posting was not written. */
export class InsufficientBalanceError extends Error {
  constructor(public merchantId: number) {
    super(`Insufficient balance for merchant ${merchantId}`)
  }
}
