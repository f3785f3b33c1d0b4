import { performDueRotations } from '#merchants/actions/perform_scheduled_rotation'
import { revokeExpiredCredentials } from '#merchants/actions/revoke_expired_credentials'

/**
 * credentials.sweep — idempotent: performs due rotations whose job was lost,
 * then revokes credentials whose grace period has ended.
 */
export default async function sweepCredentialsJob() {
  return { rotated: await performDueRotations(), revoked: await revokeExpiredCredentials() }
}
