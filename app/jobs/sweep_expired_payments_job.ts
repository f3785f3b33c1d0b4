import { sweepExpiredPayments } from '#payments/actions/expire_payment'

/** payment.sweep-expired — idempotent: only open, overdue orders are touched. */
export default async function sweepExpiredPaymentsJob() {
  return { expired: await sweepExpiredPayments() }
}
