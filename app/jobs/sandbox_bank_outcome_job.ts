import type { Job } from 'bullmq'
import { collectBankAnswer } from '#payouts/actions/dispatch_payout'

/** payout.sandbox-outcome — the sandbox bank's answer; idempotent: a final order is left as it is. */
export default async function sandboxBankOutcomeJob(job: Job<{ payoutOrderId: number }>) {
  return { completed: await collectBankAnswer(Number(job.data.payoutOrderId)) }
}
