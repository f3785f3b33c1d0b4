import type { Job } from 'bullmq'
import { expirePayment } from '#payments/actions/expire_payment'

/** payment.expire — idempotent: an order already closed is left as it is. */
export default async function expirePaymentJob(job: Job<{ paymentOrderId: number }>) {
  return { expired: await expirePayment(Number(job.data.paymentOrderId)) }
}
