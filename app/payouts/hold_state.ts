import type { HoldState } from '#payouts/payout_status'

/**
 * The hold of a withdrawal or settlement (amount + fee moved from balance
 * to freeze_balance when it is created), as a state machine beside the
 * order's own (payout_state.ts):
 *
 * - held → released: no final answer within the hold period; the money is
 *   back in balance, the order stays open.
 * - held → consumed: the bank paid; the money leaves freeze_balance.
 * - released → consumed: the bank paid after the release; the money leaves
 *   balance (which may go below zero: the bank has paid).
 * - held → returned: the payout failed; the money is back in balance.
 * - released → returned: the payout failed after the release; nothing moves.
 *
 * consumed and returned are final.
 */
export const HOLD_TRANSITIONS: Record<HoldState, readonly HoldState[]> = {
  held: ['released', 'consumed', 'returned'],
  released: ['consumed', 'returned'],
  consumed: [],
  returned: [],
}

export class IllegalHoldTransitionError extends Error {
  constructor(from: HoldState, to: HoldState) {
    super(`A payout hold cannot go from ${from} to ${to}`)
  }
}

export function assertHoldTransition(from: HoldState, to: HoldState) {
  if (!HOLD_TRANSITIONS[from].includes(to)) throw new IllegalHoldTransitionError(from, to)
}

/** Where the money of a hold being consumed is taken from. */
export function consumedFrom(from: HoldState): 'frozen' | 'available' {
  assertHoldTransition(from, 'consumed')
  return from === 'held' ? 'frozen' : 'available'
}

/** Whether returning the hold moves money back to balance (only a hold still held). */
export function returnMovesMoney(from: HoldState) {
  assertHoldTransition(from, 'returned')
  return from === 'held'
}
