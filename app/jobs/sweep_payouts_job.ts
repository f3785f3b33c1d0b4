import { sweepPayouts } from '#payouts/actions/dispatch_payout'

/** payout.sweep — idempotent: it only finishes what the per-order jobs should have done. */
export default async function sweepPayoutsJob() {
  return sweepPayouts()
}
