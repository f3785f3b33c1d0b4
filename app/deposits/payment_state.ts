/**
 * Payment order state machine (spec: Payment order status). Every status
 * change goes through `assertPaymentTransition`; settled_paid and error are
 * terminal. freeze is an operator's manual-review hold: it can be entered from
 * any non-terminal state and left back to the state it came from, or to a
 * final decision.
 */
export const PAYMENT_STATUSES = [
  'open',
  'unsettled_paid',
  'settled_paid',
  'error',
  'freeze',
] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]

export const PAYMENT_TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  open: ['unsettled_paid', 'error', 'freeze'],
  unsettled_paid: ['settled_paid', 'freeze'],
  freeze: ['open', 'unsettled_paid', 'error'],
  settled_paid: [],
  error: [],
}

export class IllegalTransitionError extends Error {
  constructor(
    public from: PaymentStatus,
    public to: PaymentStatus
  ) {
    super(`A payment order cannot go from ${from} to ${to}`)
  }
}

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_TRANSITIONS[from].includes(to)
}

export function assertPaymentTransition(from: PaymentStatus, to: PaymentStatus) {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to)
}
