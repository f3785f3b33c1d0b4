/**
 * The statuses of a withdrawal or settlement order (spec: Withdraw and
 * settlement order status) and of its hold, as the payout_orders.status and
 * hold_state columns hold them. The transitions between them are
 * payout_state.ts's and hold_state.ts's; this file imports nothing, so that
 * the model and any other module can name a status without loading the
 * state machines.
 */
export const PAYOUT_STATUSES = [
  'new',
  'queue',
  'pending',
  'success',
  'failed',
  'error',
  'cancelled',
  'rejected',
] as const
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number]

export type HoldState = 'held' | 'released' | 'consumed' | 'returned'
