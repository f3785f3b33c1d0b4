import type { UploadSlipResult } from '#slips/actions/upload_slip'

/** The spec's success text of /slip/upload. */
export const SLIP_UPLOAD_SUCCESSFUL = 'slip upload successful.'

/** Response data of /slip/upload: msg, then what the verification found. */
export function presentSlipUpload(result: UploadSlipResult) {
  return { msg: SLIP_UPLOAD_SUCCESSFUL, verification_msg: result.verificationMsg }
}
