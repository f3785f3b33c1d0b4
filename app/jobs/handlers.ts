import type { JobHandler as Handler } from '#core/queue/registry'
import { JOBS } from '#jobs/jobs'

/**
 * Job name → handler, loaded lazily so that the web process never imports job
 * code. Registered with the table of ./jobs.ts (providers/jobs_provider.ts).
 */
export const HANDLERS: Record<string, () => Promise<Handler>> = {
  [JOBS.sweepExpiredPayments.name]: async () =>
    (await import('#jobs/sweep_expired_payments_job')).default as Handler,
  [JOBS.dispatchPayout.name]: async () =>
    (await import('#jobs/dispatch_payout_job')).default as Handler,
  [JOBS.releaseOverdueHolds.name]: async () =>
    (await import('#jobs/release_overdue_holds_job')).default as Handler,
  [JOBS.releasePayoutHold.name]: async () =>
    (await import('#jobs/release_payout_hold_job')).default as Handler,
  [JOBS.sandboxBankOutcome.name]: async () =>
    (await import('#jobs/sandbox_bank_outcome_job')).default as Handler,
  [JOBS.sweepPayouts.name]: async () =>
    (await import('#jobs/sweep_payouts_job')).default as Handler,
  [JOBS.deliverCallback.name]: async () =>
    (await import('#jobs/deliver_callback_job')).default as Handler,
  [JOBS.dispatchPendingCallbacks.name]: async () =>
    (await import('#jobs/dispatch_pending_callbacks_job')).default as Handler,
  [JOBS.settlePayments.name]: async () =>
    (await import('#jobs/settle_payments_job')).default as Handler,
  [JOBS.recheckSlips.name]: async () =>
    (await import('#jobs/recheck_slips_job')).default as Handler,
  [JOBS.verifyReconciliation.name]: async () =>
    (await import('#jobs/verify_reconciliation_job')).default as Handler,
  [JOBS.verifyLedger.name]: async () =>
    (await import('#jobs/verify_ledger_job')).default as Handler,
  [JOBS.fetchStatements.name]: async () =>
    (await import('#jobs/fetch_statements_job')).default as Handler,
  [JOBS.fetchStatementSource.name]: async () =>
    (await import('#jobs/fetch_statement_source_job')).default as Handler,
  [JOBS.sweepPendingSlips.name]: async () =>
    (await import('#jobs/sweep_pending_slips_job')).default as Handler,
  [JOBS.performCredentialRotation.name]: async () =>
    (await import('#jobs/perform_credential_rotation_job')).default as Handler,
  [JOBS.sweepCredentials.name]: async () =>
    (await import('#jobs/sweep_credentials_job')).default as Handler,
  [JOBS.sweepApprovalRequests.name]: async () =>
    (await import('#jobs/sweep_approval_requests_job')).default as Handler,
  [JOBS.sealAuditLog.name]: async () =>
    (await import('#jobs/seal_audit_log_job')).default as Handler,
  [JOBS.verifyAuditChain.name]: async () =>
    (await import('#jobs/verify_audit_chain_job')).default as Handler,
  [JOBS.mailNotifications.name]: async () =>
    (await import('#jobs/mail_notifications_job')).default as Handler,
  [JOBS.purgeMerchantRequests.name]: async () =>
    (await import('#jobs/purge_merchant_requests_job')).default as Handler,
}
