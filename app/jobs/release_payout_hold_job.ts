import type { Job } from 'bullmq'
import { releasePayoutHold } from '#payouts/actions/complete_payout'

/**
 * payout.release-hold — one order's hold, as queued by earlier versions
 * (JOBS.releasePayoutHold). Idempotent: only a still-held, overdue hold is released.
 */
export default async function releasePayoutHoldJob(job: Job<{ payoutOrderId: number }>) {
  return { released: await releasePayoutHold(Number(job.data.payoutOrderId)) }
}
