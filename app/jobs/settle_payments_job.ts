import { settleDuePayments } from '#payments/actions/settle_payment'

/** payment.settle — idempotent: only unsettled_paid orders that are due move, each once. */
export default async function settlePaymentsJob() {
  return { settled: await settleDuePayments() }
}
