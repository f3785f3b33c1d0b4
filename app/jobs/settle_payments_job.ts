import { settleDuePayments } from '#reconciliation/settle_payments'

/** payment.settle — idempotent: only unsettled_paid orders that are due move, each once. */
export default async function settlePaymentsJob() {
  return { settled: await settleDuePayments() }
}
