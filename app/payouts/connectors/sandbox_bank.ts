import type PayoutOrder from '#models/payout_order'
import type { PayoutConnector, SubmitResult } from '#payouts/connectors/payout_connector'
import { dispatch } from '#queue/queue_manager'
import env from '#start/env'

/**
 * Failure cases of the sandbox bank, chosen by the last four digits of the
 * destination account number (like card-network test numbers).
 */
export const SANDBOX_OUTCOMES: Record<string, { outcome: 'failed' | 'silent'; reason?: string }> = {
  '0001': { outcome: 'failed', reason: 'account_closed' },
  '0002': { outcome: 'failed', reason: 'name_mismatch' },
  '0003': { outcome: 'failed', reason: 'insufficient_funds_at_bank' },
  // The bank never answers: exercises the 10-minute hold timeout.
  '0004': { outcome: 'silent' },
}

export function sandboxOutcome(accountNo: string): {
  outcome: 'success' | 'failed' | 'silent'
  reason?: string
} {
  return SANDBOX_OUTCOMES[accountNo.slice(-4)] ?? { outcome: 'success' }
}

/**
 * A local bank that accepts every transfer and confirms or rejects it after
 * SANDBOX_BANK_DELAY_MS (default 3 s) through the `payout.sandbox-outcome` job.
 */
export class SandboxBankConnector implements PayoutConnector {
  readonly name = 'sandbox'

  async submit(order: PayoutOrder): Promise<SubmitResult> {
    const reference = `SBXB${String(order.id).padStart(12, '0')}`
    if (sandboxOutcome(order.accountNo).outcome !== 'silent') {
      await dispatch(
        'sandboxBankOutcome',
        { payoutOrderId: order.id },
        { delay: env.get('SANDBOX_BANK_DELAY_MS', 3000), jobId: `sandbox-outcome-${order.id}` }
      )
    }
    return { state: 'pending', reference }
  }
}
