import { recheckSlips } from '#slips/actions/recheck_slips'

/** slip.sweep-pending — idempotent: pending slips of every account are verified again. */
export default async function sweepPendingSlipsJob() {
  return recheckSlips()
}
