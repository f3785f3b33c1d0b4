import type PayoutOrder from '#payouts/models/payout_order'
import type {
  BankAnswer,
  PayoutConnector,
  SubmitResult,
} from '#payouts/connectors/payout_connector'
import { dispatch } from '#core/queue/queue_manager'
import { orderJobId } from '#core/queue/job_ids'
import payoutsConfig from '#config/payouts'

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

const answerDelayMs = () => payoutsConfig.sandboxBankDelayMs

/**
 * A local bank that accepts every transfer and decides it SANDBOX_BANK_DELAY_MS
 * (default 3 s) later. It "calls back" through the `payout.sandbox-outcome`
 * job, which inquires and records the answer; a lost or early job is covered
 * by the payout sweep, which inquires too.
 */
export class SandboxBankConnector implements PayoutConnector {
  readonly name = 'sandbox'
  readonly batched = false

  async submit(order: PayoutOrder): Promise<SubmitResult> {
    if (sandboxOutcome(order.accountNo).outcome !== 'silent') {
      await dispatch(
        'sandboxBankOutcome',
        { payoutOrderId: order.id },
        { delay: answerDelayMs(), jobId: orderJobId('sandbox-outcome', order.platformOrderId) }
      )
    }
    return { state: 'pending', reference: sandboxReference(order) }
  }

  async inquire(order: PayoutOrder): Promise<BankAnswer | null> {
    const decided = sandboxOutcome(order.accountNo)
    if (decided.outcome === 'silent') return null
    // Not decided yet: the bank takes its delay from the order's creation.
    if (order.createdAt.toMillis() + answerDelayMs() > Date.now()) return null
    return {
      reference: sandboxReference(order),
      outcome:
        decided.outcome === 'success'
          ? { success: true }
          : { success: false, reason: decided.reason! },
    }
  }
}

function sandboxReference(order: PayoutOrder) {
  return `SBXB${String(order.id).padStart(12, '0')}`
}
