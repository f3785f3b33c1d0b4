/**
 * The statuses of a payment order (spec: Payment order status), as the
 * payment_orders.status column holds them. The transitions between them are
 * payment_state.ts's; this file imports nothing, so that the model and any
 * other module can name a status without loading the state machine.
 */
export const PAYMENT_STATUSES = [
  'open',
  'unsettled_paid',
  'settled_paid',
  'error',
  'freeze',
] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]
