import type { PayoutConnector, SubmitResult } from '#payouts/connectors/payout_connector'
import { BULK_FILE } from '#payouts/at_the_bank'

/**
 * Payouts made by uploading a bulk transfer file to the bank's portal. Orders
 * wait in `queue` until `payouts:export` writes them to a CSV per destination
 * bank and moves them to `pending`; the bank statement (debit lines) later
 * confirms or fails each one, so there is no bank to inquire.
 */
export class BulkFileConnector implements PayoutConnector {
  readonly name = BULK_FILE
  readonly batched = true

  async submit(): Promise<SubmitResult> {
    return { state: 'queued' }
  }

  async inquire() {
    return null
  }
}
