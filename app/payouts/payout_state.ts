/**
 * Withdraw and settlement state machine (spec: Withdraw and settlement order
 * status). Internal states are kept for operations; the API shows three.
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

export const PAYOUT_TRANSITIONS: Record<PayoutStatus, readonly PayoutStatus[]> = {
  new: ['queue', 'cancelled', 'rejected'],
  queue: ['pending', 'failed', 'error', 'cancelled'],
  pending: ['success', 'failed', 'error'],
  success: [],
  failed: [],
  error: [],
  cancelled: [],
  rejected: [],
}

export const PUBLIC_PAYOUT_STATUS: Record<PayoutStatus, 'open' | 'success' | 'failed'> = {
  new: 'open',
  queue: 'open',
  pending: 'open',
  success: 'success',
  failed: 'failed',
  error: 'failed',
  cancelled: 'failed',
  rejected: 'failed',
}

export function isFinalPayoutStatus(status: PayoutStatus) {
  return PAYOUT_TRANSITIONS[status].length === 0
}

export class IllegalPayoutTransitionError extends Error {
  constructor(from: PayoutStatus, to: PayoutStatus) {
    super(`A payout order cannot go from ${from} to ${to}`)
  }
}

export function assertPayoutTransition(from: PayoutStatus, to: PayoutStatus) {
  if (!PAYOUT_TRANSITIONS[from].includes(to)) throw new IllegalPayoutTransitionError(from, to)
}
