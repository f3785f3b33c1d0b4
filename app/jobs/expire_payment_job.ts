import type { Job } from 'bullmq'
import { expirePayment } from '#deposits/expire_payment'

/** payment.expire — idempotent: an order already closed is left as it is. */
export default async function expirePaymentJob(job: Job<{ paymentOrderId: number }>) {
  return { expired: await expirePayment(Number(job.data.paymentOrderId)) }
}
