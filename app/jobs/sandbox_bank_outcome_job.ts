import type { Job } from 'bullmq'
import { applySandboxBankOutcome } from '#payouts/dispatch_payout'

/** payout.sandbox-outcome — idempotent: a final order is left as it is. */
export default async function sandboxBankOutcomeJob(job: Job<{ payoutOrderId: number }>) {
  return { completed: await applySandboxBankOutcome(Number(job.data.payoutOrderId)) }
}
