import type { Job } from 'bullmq'
import { dispatchPayout } from '#payouts/actions/dispatch_payout'

/** payout.dispatch — idempotent: only an order in new/queue moves. */
export default async function dispatchPayoutJob(job: Job<{ payoutOrderId: number }>) {
  return { result: await dispatchPayout(Number(job.data.payoutOrderId)) }
}
