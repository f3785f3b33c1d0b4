import type { Job } from 'bullmq'
import { performScheduledRotation } from '#merchants/actions/perform_scheduled_rotation'

/** credentials.rotate — idempotent: a rotation that is no longer scheduled is left alone. */
export default async function performCredentialRotationJob(job: Job<{ rotationId: number }>) {
  return { rotated: await performScheduledRotation(Number(job.data.rotationId)) }
}
