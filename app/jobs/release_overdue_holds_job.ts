import { releaseOverdueHolds } from '#payouts/actions/complete_payout'

/** payout.release-overdue-holds — idempotent: only still-held, overdue holds are released. */
export default async function releaseOverdueHoldsJob() {
  return { released: await releaseOverdueHolds() }
}
