import type { Job } from 'bullmq'
import { recheckSlips } from '#slips/actions/recheck_slips'

/** slip.recheck — idempotent: only slips still pending are verified again. */
export default async function recheckSlipsJob(job: Job<{ depositAccountId: number }>) {
  return recheckSlips({ depositAccountId: Number(job.data.depositAccountId) })
}
